"""The narrative directory's compaction lock: one compaction at a time, whichever process.

Compacting rewrites the table's small fragments into large ones and commits a new version;
``forget``'s purge then deletes every file no version references. Two processes compacting at
once waste the work of one (LanceDB refuses the later commit), and a purge in one process
while another compacts could delete the files of the compaction being written. So both take
this lock: a ``filelock.FileLock`` on ``compaction.lock`` beside the table, an OS lock the
kernel releases when its process dies (no stale lock after a SIGKILL). Threads of one process
exclude each other too: each acquires the lock through its own file descriptor.

A directory that is a URL (object storage) has no lock file: there LanceDB's commit is the
only arbiter, and a compaction that loses is retried at the next write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

LOCK_FILE = "compaction.lock"


def lock_for(path: str) -> Any:
    """The lock of the directory ``path``; None for a URL."""
    if "://" in path:
        return None
    from filelock import FileLock

    Path(path).mkdir(parents=True, exist_ok=True)
    return FileLock(Path(path) / LOCK_FILE)


def holding(lock: Any, wait: bool) -> AbstractContextManager[bool]:
    """Hold ``lock`` for the ``with`` block: True; False when ``wait`` is False and another
    process or thread holds it (the block then runs without it, and should do nothing)."""
    if lock is None:
        return nullcontext(True)
    return _held(lock, wait)


@contextmanager
def _held(lock: Any, wait: bool) -> Iterator[bool]:
    from filelock import Timeout

    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
