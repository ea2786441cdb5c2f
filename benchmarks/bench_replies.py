"""How many turns of the packs' own conversations does Charter answer without the model, and
how long does such a turn take? Today's code against the code of a git commit ("before";
``BASELINE_REF`` is main before issue 14), in the same run, on the same conversations.

The conversations are the user turns of ``domains/<pack>/tests/conversations/*.yaml`` with who
says them (``user``, ``session``, ``user_id``) and when (``now``, ``at``); expectations,
scripted ``model:`` answers and ``outage`` are ignored. Each is played as ``charter test`` plays
it: a fresh agent (``Agent.from_pack``) on its own SQLite file, the conversation tests' memory
key, a clock standing at the conversation's ``now`` (an ``at`` moves it), and one model for
every call: the scripted backend answering “好的，已为您处理。”. A turn *without generation*
made no model call at all; the fill step that asks the model for ``model: true`` slots
(finance's “去年一季度”) counts as a generation, like a drafted reply does. Per turn: the model
calls (``ScriptedLLM.calls``), the drafts (``Reply.attempts``), whether a ticket was opened
(``Reply.ticket``) and the time of ``agent.turn`` (``perf_counter_ns``, garbage collector off).
The median of all turns is printed too: the scripted model answers at once, so even a turn
with generation is mostly Charter's time, and the two sides' template-answered turns are not
the same turns (before, only questions and fallbacks were).

Each side runs in a fresh subprocess per round, the sides taking turns (which goes first
alternates), so load from other processes hits both alike. Today's side puts the work tree's
``framework`` and plugins first on ``PYTHONPATH``; the before side runs in a temporary ``git
worktree`` of the commit (removed afterwards) with the commit's own, and gets the turns as JSON
(the old code has no conversation files). Each side checks that ``charter`` and the plugins
were imported from its tree (an editable install must not win) and stops loudly otherwise. The
packs are compiled once per process (a cache directory per side) and each pack's first
conversation is played once before the measured ones, to warm imports and caches.

    python benchmarks/bench_replies.py --side PAYLOAD.json OUT.json   (what bench_turn runs)
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from bench_support import Section

REPO = Path(__file__).resolve().parent.parent
PACKS = ("finance", "ecommerce", "medical")
BASELINE_REF = "0affdca"  # main before issue 14 (replies composed from templates)
REPLY = "好的，已为您处理。"
TARGET_TEMPLATE_MS = 20.0  # median of a turn without generation
ROUNDS = {True: 1, False: 5}  # quick, full
_T = TypeVar("_T")
PLUGINS = ("charter-zh", "charter-skills", "charter-llamacpp")
Turns = list[list[dict[str, Any]]]  # per conversation, per turn


# ---- the conversations (parent) -------------------------------------------------------------


def _time(value: object) -> str | None:
    """YAML reads an unquoted ISO time as a datetime: back to its ISO text."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value if isinstance(value, str) else None


def conversations(pack_dir: Path) -> list[dict[str, Any]]:
    """The pack's conversations as ``{name, now, turns: [{text, user, session, at}]}``, with
    each turn's user and session resolved (they hold from the turn that sets them on)."""
    import yaml

    from charter.compile.conversations import DEFAULT_NOW, DEFAULT_SESSION, DEFAULT_USER

    out = []
    for path in sorted((pack_dir / "tests" / "conversations").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text("utf-8")) or {}
        for raw in doc.get("conversations") or ():
            user = raw.get("user") or DEFAULT_USER
            session = raw.get("session") or DEFAULT_SESSION
            turns = []
            for turn in raw.get("turns") or ():
                user = turn.get("user_id") or user
                session = turn.get("session") or session
                turns.append(
                    {
                        "text": turn["user"],
                        "user": user,
                        "session": session,
                        "at": _time(turn.get("at")),
                    }
                )
            now = _time(raw.get("now")) or DEFAULT_NOW
            out.append({"name": f"{path.stem}: {raw['name']}", "now": now, "turns": turns})
    return out


def strict(pack_dir: Path) -> bool:
    """Whether the pack's responses.yaml says ``mode: strict`` (no reply is generated)."""
    import yaml

    path = pack_dir / "responses.yaml"
    if not path.is_file():
        return False
    return (yaml.safe_load(path.read_text("utf-8")) or {}).get("mode") == "strict"


# ---- playing them (a side's subprocess, with either version's charter) ----------------------


@dataclass
class _Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


def _play(
    pack: Any, registry: Any, conversation: dict[str, Any], db: Path, key: bytes
) -> list[dict[str, Any]]:
    """One conversation through a fresh agent: a record per turn (a turn that raises ends the
    conversation, as in the conversation runner)."""
    from charter.agent import Agent
    from charter.llm.scripted import ScriptedLLM

    db.unlink(missing_ok=True)
    db.touch()
    clock = _Clock(datetime.fromisoformat(conversation["now"]))
    llm = ScriptedLLM(default=REPLY)
    agent = Agent.from_pack(
        pack,
        llm=llm,
        database_url=f"sqlite:///{db}",
        memory_key=key,
        registry=registry,
        environ={},
        clock=clock,
    )
    records: list[dict[str, Any]] = []
    try:
        for turn in conversation["turns"]:
            if turn["at"]:
                clock.now = datetime.fromisoformat(turn["at"])
            calls = len(llm.calls)
            gc.disable()
            t0 = time.perf_counter_ns()
            try:
                reply = agent.turn(turn["user"], turn["session"], turn["text"])
            except Exception as exc:  # reported; it ends the conversation, as in the runner
                records.append({"error": f"{type(exc).__name__}: {exc}"})
                break
            finally:
                ns = time.perf_counter_ns() - t0
                gc.enable()
            records.append(
                {
                    "generations": len(llm.calls) - calls,
                    "attempts": reply.attempts,
                    "ticket": reply.ticket is not None,
                    "verdict": reply.verdict,
                    "answered_by": reply.answered_by,
                    "ms": ns / 1e6,
                }
            )
    finally:
        agent.close()
    return records


def _imported_from(root: Path) -> None:
    """Stop loudly when charter or a plugin comes from outside ``root``."""
    import importlib

    for name in ("charter", "charter_zh", "charter_skills"):
        where = Path(importlib.import_module(name).__file__ or "").resolve()
        if not where.is_relative_to(root.resolve()):
            raise SystemExit(f"{name} was imported from {where}, not from {root}")


def side(payload: dict[str, Any]) -> dict[str, Turns]:
    """Every pack's conversations played, after a warm-up conversation per pack."""
    from charter import default_host  # the facade: the same name before and after the layout move
    from charter.compile.api import compile_path

    _imported_from(Path(payload["root"]))
    registry = default_host().registry
    key = bytes.fromhex(payload["key"])
    work = Path(tempfile.mkdtemp(prefix="charter-bench-replies-"))
    played: dict[str, Turns] = {}
    try:
        for name, spec in payload["packs"].items():
            pack, diags = compile_path(
                Path(spec["dir"]), registry, cache_dir=Path(payload["cache"])
            )
            if pack is None:
                raise SystemExit(f"{spec['dir']} does not compile:\n" + "\n".join(map(str, diags)))
            plays = spec["conversations"]
            _play(pack, registry, plays[0], work / "warm.db", key)
            played[name] = [
                _play(pack, registry, c, work / f"{name}-{n}.db", key) for n, c in enumerate(plays)
            ]
            gc.collect()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return played


# ---- the sides (parent) ---------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    label: str  # today, before
    root: Path  # the tree whose framework, plugins and domains run

    def env(self) -> dict[str, str]:
        paths = [self.root / "framework"] + [
            self.root / "plugins" / p for p in PLUGINS if (self.root / "plugins" / p).is_dir()
        ]
        return {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}

    def run(
        self, plays: dict[str, list[dict[str, Any]]], key: bytes, cache: Path
    ) -> dict[str, Turns]:
        packs = {
            p: {"dir": str(self.root / "domains" / p), "conversations": c} for p, c in plays.items()
        }
        payload = {"root": str(self.root), "key": key.hex(), "cache": str(cache), "packs": packs}
        with tempfile.TemporaryDirectory(prefix="charter-bench-side-") as tmp:
            src, out = Path(tmp) / "payload.json", Path(tmp) / "played.json"
            src.write_text(json.dumps(payload, ensure_ascii=False), "utf-8")
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--side", str(src), str(out)],
                cwd=self.root,
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if done.returncode != 0:
                raise SystemExit(f"the {self.label} side failed:\n{done.stdout}{done.stderr}")
            played: dict[str, Turns] = json.loads(out.read_text("utf-8"))
            return played


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[tuple[Path, str] | str]:
    """(the repository's root in a detached worktree of ``ref``, its commit), removed on exit;
    or why there is none."""
    if shutil.which("git") is None:
        yield "git is not installed"
        return
    top = _git("rev-parse", "--show-toplevel")
    if top.returncode != 0:
        yield f"{REPO} is not in a git repository"
        return
    commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        yield f"no commit {ref} in the repository" + (", a shallow clone" if shallow else "")
        return
    sha = commit.stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="charter-baseline-"))
    tree = tmp / "tree"
    added = _git("worktree", "add", "--detach", str(tree), sha)
    if added.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        yield f"git worktree add failed: {added.stderr.strip()}"
        return
    try:
        yield tree / REPO.relative_to(Path(top.stdout.strip()).resolve()), sha
    finally:
        _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(tmp, ignore_errors=True)


# ---- the figures ----------------------------------------------------------------------------


def _outcome(t: dict[str, Any]) -> tuple[Any, ...]:
    return (t.get("error"), t.get("generations"), t.get("ticket"), t.get("verdict"))


def figures(rounds: list[Turns]) -> dict[str, Any]:
    """A pack's figures over its rounds; the rounds must have played alike."""
    first = [t for conv in rounds[0] for t in conv]
    for other in rounds[1:]:
        if [_outcome(t) for conv in other for t in conv] != [_outcome(t) for t in first]:
            raise AssertionError(
                "the rounds disagree: a turn's model calls, verdict or ticket changed"
            )
    ok = [t for t in first if "error" not in t]
    times = sorted(t["ms"] for r in rounds for conv in r for t in conv if t.get("generations") == 0)
    without = sum(1 for t in ok if t["generations"] == 0)
    out: dict[str, Any] = {
        "turns": len(ok),
        "raised": [t["error"] for t in first if "error" in t],
        "without_generation": without,
        "share": round(100 * without / len(ok), 1) if ok else 0.0,
        "tickets": sum(1 for t in ok if t["ticket"]),
        "generations": sum(t["generations"] for t in ok),
        "drafts": sum(t["attempts"] for t in ok),
        "timed": len(times),
    }
    every = [t["ms"] for r in rounds for conv in r for t in conv if "error" not in t]
    if every:  # the model answers at once: with generation this is Charter's time too
        out["p50_all_ms"] = round(statistics.median(every), 3)
    if times:
        out["p50_ms"] = round(statistics.median(times), 3)
        out["p90_ms"] = (
            round(statistics.quantiles(times, n=10)[8], 3) if len(times) > 1 else times[0]
        )
    return out


def _num(value: Any, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}{unit}" if isinstance(value, float) else f"{value}{unit}"


def _line(pack: str, today: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    def both(key: str, unit: str = "") -> str:
        text = _num(today.get(key), unit)
        return text if before is None else f"{text} (before {_num(before.get(key), unit)})"

    lines = [
        f"{pack}: {today['turns']} turns, without generation {both('share', '%')}, "
        f"tickets {both('tickets')}, template-answered turn median {both('p50_ms', ' ms')}",
        f"  model calls {both('generations')}, of them reply drafts {both('drafts')}; "
        f"template-answered turns {both('without_generation')}, p90 {both('p90_ms', ' ms')}; "
        f"median of all turns {both('p50_all_ms', ' ms')}",
    ]
    for label, f in (("today", today), ("before", before or {})):
        if f.get("raised"):
            lines.append(f"  {label}: {len(f['raised'])} turn(s) raised, first: {f['raised'][0]}")
    return lines


def alternate(
    ref: str, rounds: int, play: Callable[[Side, Path], _T]
) -> tuple[dict[str, list[_T]], dict[str, str]]:
    """``play(side, cache)`` for every round of every side (today, and before when ``ref`` can
    be checked out), the sides taking turns, each with a compile cache of its own; and what
    the baseline is: ``{ref, commit}`` or ``{ref, unavailable}``."""
    with contextlib.ExitStack() as stack:
        cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="charter-bench-c-")))
        got = stack.enter_context(worktree(ref))
        sides = [Side("today", REPO)]
        if isinstance(got, tuple):
            sides.append(Side("before", got[0]))
        played: dict[str, list[_T]] = {s.label: [] for s in sides}
        for r in range(rounds):
            for s in sides if r % 2 == 0 else sides[::-1]:
                played[s.label].append(play(s, cache / s.label))
    baseline = {"ref": ref, "commit": got[1]} if isinstance(got, tuple) else {"ref": ref}
    if isinstance(got, str):
        baseline["unavailable"] = got
    return played, baseline


def play_sides(quick: bool, ref: str) -> tuple[dict[str, list[dict[str, Turns]]], dict[str, str]]:
    """Every round of every side, and what the baseline is (``alternate``)."""
    from charter.conversations.runner import TEST_MEMORY_KEY

    plays = {p: conversations(REPO / "domains" / p) for p in PACKS}
    return alternate(ref, ROUNDS[quick], lambda s, cache: s.run(plays, TEST_MEMORY_KEY, cache))


def measure(quick: bool, ref: str = BASELINE_REF) -> Section:
    """The per-pack figures, today against ``ref``, as a report section."""
    from bench_support import Section

    load = os.getloadavg()
    played, baseline = play_sides(quick, ref)
    n = ROUNDS[quick]
    per_pack = {
        p: {label: figures([r[p] for r in rounds]) for label, rounds in played.items()}
        for p in PACKS
    }
    lines = [
        "Replies without generation, per pack: the conversation tests' user turns, a fresh agent "
        f"per conversation (SQLite file, fixed clock), every model call answered “{REPLY}” by "
        f"the scripted backend, {n} round(s), load average {load[0]:.2f} at the start",
        f"baseline: not available ({baseline['unavailable']})"
        if "unavailable" in baseline
        else f"  before = {ref} ({baseline['commit'][:12]}) in a temporary git worktree; the "
        "sides take turns, a fresh process each",
        "  a turn without generation made no model call (the fill step's call for model: true "
        "slots counts as one)",
    ]
    targets: list[tuple[str, bool]] = []
    for p in PACKS:
        today = per_pack[p]["today"]
        lines += _line(p, today, per_pack[p].get("before"))
        if strict(REPO / "domains" / p):
            # a strict pack's reply is never generated; the fill step may still ask the model
            # to read a model: true slot (finance's 去年一季度): counted, and said, not a reply
            fill = today["generations"] - today["drafts"]
            targets.append(
                (
                    f"{p}: replies drafted by the model in strict mode {today['drafts']} = 0 "
                    f"(turns without any model call {today['share']:.1f}%; {fill} fill-step "
                    "call(s) reading model: true slots)",
                    today["drafts"] == 0,
                )
            )
        p50 = today.get("p50_ms")
        targets.append(
            (
                f"{p}: template-answered turn median {_num(p50, ' ms')} <= "
                f"{TARGET_TEMPLATE_MS:g} ms",
                p50 is not None and p50 <= TARGET_TEMPLATE_MS,
            )
        )
    lines.append(
        f"outcomes: the {n} round(s) of each side played alike (model calls, verdicts, tickets): OK"
    )
    return Section(
        lines=lines,
        targets=targets,
        figures={
            "rounds": n,
            "load_average": [round(x, 2) for x in load],
            "baseline": baseline,
            "packs": per_pack,
        },
    )


def _side_main(args: list[str]) -> int:
    src, out = Path(args[0]), Path(args[1])
    played = side(json.loads(src.read_text("utf-8")))
    out.write_text(json.dumps(played, ensure_ascii=False), "utf-8")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["--side"] or len(sys.argv) != 4:
        raise SystemExit(
            "usage: bench_replies.py --side PAYLOAD.json OUT.json (bench_turn runs it)"
        )
    sys.exit(_side_main(sys.argv[2:]))
