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

from charter.compile.specs import goals as S
from charter.pack.typed import goals as T
from charter.pack.yamlsrc import Pointer

# (code, message, pointer, hint) -> None
Report = Callable[[str, str, Pointer, str], None]
KINDS = ("slots", "skill", "by")


def stages(
    items: Sequence[T.Stage | None],
    ptr: Pointer,
    iid: str,
    names: Sequence[str],
    bind: Callable[[T.SkillBinding | None, Pointer], S.SkillBinding | None],
    report: Report,
) -> tuple[S.StageSpec, ...]:
    """The stages of intent ``iid`` (``names``: its slots); ``bind`` compiles a skill binding."""
    out: list[S.StageSpec] = []
    seen: set[str] = set()
    for n, item in enumerate(items):
        at = (*ptr, n)
        if item is None or item.id is None:
            continue  # the schema reported it
        sid = item.id
        if sid in seen:
            report("CH306", f"stage '{sid}' of intent '{iid}' is defined twice", (*at, "id"), "")
            continue
        seen.add(sid)
        given = {"slots": bool(item.slots), "skill": item.skill is not None, "by": bool(item.by)}
        kinds = [k for k in KINDS if given[k]]
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
        for j, name in enumerate(item.slots):
            if name not in names:
                report(
                    "CH306",
                    f"stage '{sid}' of intent '{iid}' waits for '{name}', which is not one of "
                    "its slots",
                    (*at, "slots", j),
                    "declare the slot under the intent's slots:",
                )
        out.append(
            S.StageSpec(
                id=sid,
                describe=item.describe or sid,
                slots=item.slots,
                skill=bind(item.skill, (*at, "skill")) if "skill" in kinds else None,
                by=item.by,
                passed=item.status.completed or "completed",
                failed=item.status.aborted or "aborted",
                quiet=item.quiet,
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
