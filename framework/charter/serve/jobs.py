"""What ``charter serve`` runs besides requests: the goal sweeper and the memory lifecycle.

Without them nothing aborts a goal whose asynchronous step never reported back, and no fact
is ever marked expired or archived (so the health report's decay compliance reads 0 of N).
Each job runs once when the application starts, then every ``serve.sweep_every`` (goals) and
``serve.maintain_every`` (memory); ``off`` turns one off (a cron job running ``charter goals
sweep`` / ``charter memory maintain`` instead, for instance).

A pass runs on a thread of its own, off the event loop; the memory pass is ``Agent.maintain``,
which a forget waits for (and the other way round). Stopping (the application's shutdown)
lets a pass in progress finish — the agent's stores close right after, under a pass that would
then fail midway — but waits at most ``STOP_TIMEOUT_S``; a job never delays a shutdown longer.
The thread is a daemon and not the event loop's default executor: ``asyncio.run`` (uvicorn's
too) joins that executor when the loop ends, and the interpreter joins non-daemon threads at
exit, so a pass stuck past the bound would hold the process after all.
A pass that raises is logged and the next one runs as planned. Several workers each run the
jobs: every job is idempotent, so two passes at once leave the state one pass would (an abort
is a compare-and-set from ``active``; two memory passes at once may both audit one change).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from charter.agent import Agent
from charter.goals.sweeper import sweep

log = logging.getLogger("charter.serve.jobs")
STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Job:
    name: str
    interval_s: float
    run: Callable[[], object]


def agent_jobs(
    agent: Agent, sweep_every_s: float | None, maintain_every_s: float | None
) -> list[Job]:
    """The jobs for an agent; an interval of None leaves that job out."""
    parts = agent.parts
    jobs = []
    if sweep_every_s is not None:
        jobs.append(Job("goal sweep", sweep_every_s, lambda: sweep(parts.goals, parts.clock())))
    if maintain_every_s is not None:
        jobs.append(Job("memory maintenance", maintain_every_s, agent.maintain))
    return jobs


class Background:
    """Runs jobs on the event loop of the application, each pass on a worker thread."""

    def __init__(self, jobs: list[Job]) -> None:
        self._jobs = jobs
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.passes: dict[str, int] = {j.name: 0 for j in jobs}  # for tests and health

    def start(self) -> None:
        self._stopping.clear()
        self._tasks = [
            asyncio.create_task(self._loop(job), name=f"charter {job.name}") for job in self._jobs
        ]

    async def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Stop every loop: a pass in progress may finish, within ``timeout_s``."""
        self._stopping.set()
        if not self._tasks:
            return
        _, late = await asyncio.wait(self._tasks, timeout=timeout_s)
        for task in late:
            log.warning("%s still running at shutdown: cancelled", task.get_name())
            task.cancel()
        for task in late:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _loop(self, job: Job) -> None:
        while not self._stopping.is_set():
            try:
                await on_daemon_thread(job.run, f"charter {job.name}")
                self.passes[job.name] += 1
            except Exception:  # a database hiccup must not end the job for good
                log.exception("%s failed; next pass in %ss", job.name, job.interval_s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), job.interval_s)


async def on_daemon_thread(run: Callable[[], object], name: str) -> object:
    """``run()`` on a new daemon thread; its result, or its exception, once it returns. When
    the awaiting task is cancelled the thread runs on, and nothing waits for it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[object] = loop.create_future()

    def settle(result: object, error: BaseException | None) -> None:
        if done.done():  # cancelled meanwhile: nobody awaits the outcome
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def target() -> None:
        result: object = None
        error: BaseException | None = None
        try:
            result = run()
        except BaseException as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed while the pass ran
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await done
