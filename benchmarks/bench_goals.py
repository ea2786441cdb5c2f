"""How fast does a goal move through ``GoalStore``, against raw ``sqlite3`` doing the same work?

In one run, round by round, N goals move pending -> active -> completed (2 transitions each)
through ``GoalStore.transition`` and through plain ``sqlite3`` executing the statements the
store executes, in the same transaction: ``BEGIN IMMEDIATE``; read the goal; the check against
``states.TRANSITIONS``; the compare-and-set ``UPDATE goal_tree SET status=?, updated_at=?
WHERE id=? AND status=?``; the ``goal_history`` insert; ``COMMIT``. Each side gets a fresh
temporary SQLite file in WAL mode with the same pragmas (``synchronous=NORMAL``, a busy
timeout, foreign keys), its schema made by the store's migrations and its goals created before
the clock starts. The two sides take turns (which goes first alternates) and the figures are
medians over the rounds. Before anything is reported it asserts that both sides made the same
transitions and wrote the same history.

    python benchmarks/bench_goals.py [--quick] [--check] [--json FILE]

``--check`` exits 1 when a target is missed (otherwise the exit status is 0: it is a report);
``--quick`` runs few goals and one round (for the smoke test); ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy
from bench_support import Section

from charter.compile.specs.goal_states import Status, allowed
from charter.goals.store import GoalStore
from charter.store.migrations import SQLITE_BUSY_TIMEOUT_MS

TARGET_RATIO = 3.0  # store time / raw sqlite3 time
TARGET_TPS = 5000.0
STEPS: tuple[Status, ...] = ("active", "completed")


@dataclass(frozen=True)
class Settings:
    goals: int
    rounds: int


FULL = Settings(goals=2000, rounds=5)
QUICK = Settings(goals=100, rounds=1)


# ---- planner latency: the lead fills this in -----------------------------------------------


TARGET_PLANNER_US = 200.0
PLANNER_ROUNDS = {True: 20, False: 400}  # quick, full


def planner_latency(settings: Settings) -> Section | None:
    """Median µs per input of ``Planner.plan`` on the ecommerce pack's planner test inputs
    (each with its open goals), against a seed-style splitter (seed 000 §3.3.1): every intent's
    own words tested with ``in`` and every slot pattern or extractor run on the whole input, once
    per intent, with no segmenting, limits, corrections or inheritance. The baseline does less
    work, so the ratio says what the planner's guarantees cost."""
    import regex

    from charter.compile.api import compile_path
    from charter.goals.planner import Planner, state_from
    from charter.plugins.host import default_registry

    registry, _ = default_registry()
    pack, diags = compile_path(
        Path(__file__).resolve().parents[1] / "domains" / "ecommerce", registry, cache_dir=None
    )
    if pack is None or pack.goals is None:
        raise SystemExit("the ecommerce pack does not compile:\n" + "\n".join(map(str, diags)))
    spec = pack.goals
    planner = Planner(spec, registry, pack.constants)
    cases = [(c.input, state_from(c.goals, c.now)) for c in spec.cases]
    patterns = {
        (i.id, s.name): regex.compile(s.regex, regex.V1)
        for i in spec.intents
        for s in i.slots
        if s.regex
    }
    extractors = registry.extractors

    def seed_split(text: str) -> list[tuple[str, dict[str, object]]]:
        out = []
        for intent in spec.intents:
            if any(word in text for word in intent.literals):
                found: dict[str, object] = {}
                for slot in intent.slots:
                    if slot.regex:
                        m = patterns[(intent.id, slot.name)].search(text)
                        if m:
                            found[slot.name] = m.group(0)
                    elif slot.extractor in extractors:
                        items = extractors[slot.extractor].extract(text)
                        if items:
                            found[slot.name] = items[0].text
                out.append((intent.id, found))
        return out

    rounds = PLANNER_ROUNDS[settings is QUICK]
    fns = [lambda t, st: planner.plan(t, st), lambda t, st: seed_split(t)]
    times: list[list[list[int]]] = [[[] for _ in cases] for _ in fns]
    for text, state in cases:  # warm up: caches of regexes and extractors
        planner.plan(text, state)
        seed_split(text)
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for r in range(rounds):
            for fi in (0, 1) if r % 2 == 0 else (1, 0):
                fn = fns[fi]
                for ci, (text, state) in enumerate(cases):
                    t0 = clock()
                    fn(text, state)
                    times[fi][ci].append(clock() - t0)
    finally:
        gc.enable()
    per_input = [[statistics.median(t) / 1000 for t in per_fn] for per_fn in times]
    planner_us, seed_us = (statistics.median(p) for p in per_input)
    lines = [
        f"planner latency, ecommerce pack ({len(spec.intents)} intents), median µs per input over "
        f"its {len(cases)} planner test inputs, {rounds} rounds:",
        f"  {'Planner.plan':<32}{planner_us:>10.1f}   (per-input range "
        f"{min(per_input[0]):.0f}–{max(per_input[0]):.0f})",
        f"  {'seed-style keyword split':<32}{seed_us:>10.1f}   (does less: no segmenting, limits, "
        "corrections or inheritance)",
        f"  {'planner / seed-style':<32}{planner_us / seed_us:>9.2f}x",
    ]
    return Section(
        lines=lines,
        targets=[
            (
                f"planner median {planner_us:.1f} µs per input <= {TARGET_PLANNER_US:g} µs",
                planner_us <= TARGET_PLANNER_US,
            )
        ],
        figures={
            "planner_us": round(planner_us, 2),
            "seed_style_us": round(seed_us, 2),
            "inputs": len(cases),
        },
    )


# ---- goal store throughput -----------------------------------------------------------------


def _fresh_db(directory: Path, name: str, goals: int) -> tuple[Path, list[str]]:
    path = directory / f"{name}.db"
    with GoalStore(f"sqlite:///{path}") as store:
        ids = [store.create("bench", user_id="u", session_id="s").id for _ in range(goals)]
    return path, ids


def store_side(path: Path, ids: Sequence[str]) -> float:
    """Seconds for every transition through ``GoalStore`` (no hook: the statements only)."""
    with GoalStore(f"sqlite:///{path}") as store:
        store.get(ids[0])  # the pool's first connection is not part of the figure
        t0 = time.perf_counter()
        for goal_id in ids:
            for to in STEPS:
                if not store.transition(goal_id, to, actor="agent", trigger="bench").ok:
                    raise AssertionError(f"store: {goal_id} -> {to} refused")
        return time.perf_counter() - t0


_SELECT = "SELECT status, parent_id, intent, user_id, session_id FROM goal_tree WHERE id = ?"
_CAS = "UPDATE goal_tree SET status = ?, updated_at = ? WHERE id = ? AND status = ?"
_CAS_ACTIVATE = (
    "UPDATE goal_tree SET status = ?, updated_at = ?, activated_at = ? WHERE id = ? AND status = ?"
)
_RECORD = (
    'INSERT INTO goal_history (goal_id, from_status, to_status, actor, "trigger", at) '
    "VALUES (?, ?, ?, ?, ?, ?)"
)


def raw_side(path: Path, ids: Sequence[str]) -> float:
    """Seconds for the same transitions with the same statements through ``sqlite3``."""
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", f"busy_timeout={SQLITE_BUSY_TIMEOUT_MS}"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    try:
        t0 = time.perf_counter()
        for goal_id in ids:
            for to in STEPS:
                # the same text SQLAlchemy stores for an aware UTC datetime on SQLite
                now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
                conn.execute("BEGIN IMMEDIATE")
                frm = conn.execute(_SELECT, (goal_id,)).fetchone()[0]
                if not allowed(frm, to):
                    raise AssertionError(f"raw: {goal_id} {frm} -> {to} not allowed")
                if to == "active":
                    cur = conn.execute(_CAS_ACTIVATE, (to, now, now, goal_id, frm))
                else:
                    cur = conn.execute(_CAS, (to, now, goal_id, frm))
                if cur.rowcount != 1:
                    raise AssertionError(f"raw: {goal_id} lost a race nobody ran")
                conn.execute(_RECORD, (goal_id, frm, to, "agent", "bench", now))
                conn.execute("COMMIT")
        return time.perf_counter() - t0
    finally:
        conn.close()


def outcome(path: Path) -> tuple[list[tuple[str, int]], list[tuple[str | None, str, int]]]:
    """Statuses and history rows by kind: what both sides must agree on."""
    conn = sqlite3.connect(path)
    try:
        statuses = conn.execute(
            "SELECT status, count(*) FROM goal_tree GROUP BY status ORDER BY status"
        ).fetchall()
        moves = conn.execute(
            "SELECT from_status, to_status, count(*) FROM goal_history "
            "GROUP BY from_status, to_status ORDER BY from_status, to_status"
        ).fetchall()
    finally:
        conn.close()
    return statuses, moves


@dataclass(frozen=True)
class Throughput:
    transitions: int
    store_s: list[float]
    raw_s: list[float]

    @property
    def store_tps(self) -> float:
        return self.transitions / statistics.median(self.store_s)

    @property
    def raw_tps(self) -> float:
        return self.transitions / statistics.median(self.raw_s)

    @property
    def ratio(self) -> float:
        """How many times longer the store takes than raw sqlite3."""
        return self.raw_tps / self.store_tps


def measure(settings: Settings) -> Throughput:
    store_s: list[float] = []
    raw_s: list[float] = []
    for r in range(settings.rounds):
        with tempfile.TemporaryDirectory(prefix="charter-bench-goals-") as tmp:
            store_db, store_ids = _fresh_db(Path(tmp), "store", settings.goals)
            raw_db, raw_ids = _fresh_db(Path(tmp), "raw", settings.goals)
            gc.collect()
            sides = [(store_side, store_db, store_ids, store_s), (raw_side, raw_db, raw_ids, raw_s)]
            for fn, path, ids, out in sides if r % 2 == 0 else sides[::-1]:
                out.append(fn(path, ids))
            if outcome(store_db) != outcome(raw_db):
                raise AssertionError(
                    f"the two sides disagree: store {outcome(store_db)}, raw {outcome(raw_db)}"
                )
    return Throughput(settings.goals * len(STEPS), store_s, raw_s)


def report(settings: Settings, t: Throughput, extra: Section | None) -> list[tuple[str, bool]]:
    print(
        f"Charter goal store benchmark: {settings.goals} goals x {len(STEPS)} transitions "
        f"(pending -> active -> completed), {settings.rounds} round(s), SQLite "
        f"{sqlite3.sqlite_version} in WAL mode on a temporary file, Python "
        f"{sys.version.split()[0]}, SQLAlchemy {sqlalchemy.__version__}"
    )
    print()
    print(f"  {'median over rounds':<32}{'transitions/s':>14}{'µs per transition':>20}")
    for label, tps in (
        ("GoalStore.transition", t.store_tps),
        ("raw sqlite3, same statements", t.raw_tps),
    ):
        print(f"  {label:<32}{tps:>14,.0f}{1e6 / tps:>20.1f}")
    print(f"  {'store time / raw time':<32}{t.ratio:>13.2f}x")
    print()
    print(
        f"outcomes: both sides made the same {t.transitions} transitions and wrote the same "
        "history: OK"
    )
    targets = [
        (
            f"store within {TARGET_RATIO:g}x of raw sqlite3 ({t.ratio:.2f}x)",
            t.ratio <= TARGET_RATIO,
        ),
        (
            f"store >= {TARGET_TPS:,.0f} transitions/s ({t.store_tps:,.0f})",
            t.store_tps >= TARGET_TPS,
        ),
    ]
    if extra is not None:
        print()
        for line in extra.lines:
            print(line)
        targets += extra.targets
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few goals, one round (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL

    throughput = measure(settings)
    planner = planner_latency(settings)
    targets = report(settings, throughput, planner)

    if args.json is not None:
        figures = {
            "settings": settings.__dict__,
            "transitions": throughput.transitions,
            "store_tps": round(throughput.store_tps, 1),
            "raw_sqlite3_tps": round(throughput.raw_tps, 1),
            "ratio": round(throughput.ratio, 3),
            "store_s": [round(s, 4) for s in throughput.store_s],
            "raw_s": [round(s, 4) for s in throughput.raw_s],
            "planner": planner.figures if planner is not None else None,
            "targets": [{"target": text, "ok": ok} for text, ok in targets],
        }
        args.json.write_text(
            json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
