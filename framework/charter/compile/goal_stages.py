"""Compile an intent's ``stages:`` (goals.yaml): the steps of its staged flow, each a sub-goal
with its own status (seed 000 §5.3). Part of the ``goals`` stage; the stage skills' contracts
are checked by the ``skills`` stage (CH328), which knows them.

Each stage names what completes it — exactly one of ``slots`` (the goal's slots are given),
``skill`` (a query over the goal's slots, ``done:`` its verdict) and ``by`` (a goal of another
intent completes) — and may call its two outcomes by the pack's words (``status: {completed:
compliant, aborted: non_compliant}``). Problems are CH306.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from charter.compile.specs import goals as S
from charter.pack.yamlsrc import Pointer

# (code, message, pointer, hint) -> None
Report = Callable[[str, str, Pointer, str], None]
KINDS = ("slots", "skill", "by")


def stages(
    raw: Any,
    ptr: Pointer,
    iid: str,
    names: Sequence[str],
    bind: Callable[[Any, Pointer], S.SkillBinding | None],
    report: Report,
) -> tuple[S.StageSpec, ...]:
    """The stages of intent ``iid`` (``names``: its slots); ``bind`` compiles a skill binding."""
    out: list[S.StageSpec] = []
    seen: set[str] = set()
    for n, item in enumerate(raw if isinstance(raw, list) else []):
        at = (*ptr, n)
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue  # the schema reported it
        sid = item["id"]
        if sid in seen:
            report("CH306", f"stage '{sid}' of intent '{iid}' is defined twice", (*at, "id"), "")
            continue
        seen.add(sid)
        kinds = [k for k in KINDS if item.get(k) not in (None, [], "")]
        if len(kinds) != 1:
            said = ", ".join(kinds) if kinds else "none of them"
            report(
                "CH306",
                f"stage '{sid}' of intent '{iid}' must say what completes it with exactly one "
                f"of slots, skill or by (it has {said})",
                at,
                "slots: the goal's slots are given; skill: a check over them; by: an intent "
                "whose goal completes it",
            )
            continue
        wanted = [s for s in item.get("slots") or [] if isinstance(s, str)]
        for j, name in enumerate(wanted):
            if name not in names:
                report(
                    "CH306",
                    f"stage '{sid}' of intent '{iid}' waits for '{name}', which is not one of "
                    "its slots",
                    (*at, "slots", j),
                    "declare the slot under the intent's slots:",
                )
        found = item.get("status")
        status: dict[str, Any] = found if isinstance(found, dict) else {}
        out.append(
            S.StageSpec(
                id=sid,
                describe=str(item.get("describe") or sid),
                slots=tuple(wanted),
                skill=bind(item.get("skill"), (*at, "skill")) if "skill" in kinds else None,
                by=item["by"] if isinstance(item.get("by"), str) else None,
                passed=str(status.get("completed") or "completed"),
                failed=str(status.get("aborted") or "aborted"),
                quiet=bool(item.get("quiet")),
            )
        )
    return tuple(out)


def check_by(
    intents: Sequence[S.IntentSpec], where: Callable[[str, int], Pointer], report: Report
) -> None:
    """A stage's ``by:`` names an intent of the pack other than its own."""
    ids = {i.id for i in intents}
    for intent in intents:
        for n, stage in enumerate(intent.stages):
            if stage.by is not None and (stage.by not in ids or stage.by == intent.id):
                report(
                    "CH306",
                    f"stage '{stage.id}' of intent '{intent.id}' is completed by "
                    f"'{stage.by}', which is not another intent of the pack",
                    (*where(intent.id, n), "by"),
                    "by: names the intent whose completed goal ends this stage",
                )
