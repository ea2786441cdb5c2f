"""The narrative channel's lifecycle (ARCHITECTURE §7, seed 003 §3.2): expiry, cold tiering,
merging of recurring questions into one tag, and deprecation when the user says 我懂了.

Reads never depend on these jobs having run (``NarrativeStore.scope`` filters expired and cold
rows itself, and decay is applied when ranking); the jobs make the state explicit for listings,
exports and health metrics, and keep the searched set small. Each change is audited as the
system acting on the user's memory.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from charter.memory.facts_access import audit_row, require_user, system_row
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative_rows import COLUMNS, epoch, quote
from charter.memory.records import Accessor, Summary

_DAY = 86400.0


def _ids(rows: Sequence[dict[str, Any]]) -> str:
    return "id IN (" + ", ".join(quote(r["id"]) for r in rows) + ")"


def expire(store: NarrativeStore, now: datetime) -> int:
    """Mark active summaries whose ``valid_until`` passed as expired; return how many."""
    where = f"status = 'active' AND valid_until IS NOT NULL AND valid_until <= {epoch(now)!r}"
    return _mark(store, where, "expired", "expire", now, "valid_until passed")


def archive_cold(store: NarrativeStore, now: datetime) -> int:
    """Archive active summaries idle longer than the warm tier: no longer searched, still in
    ``export``; return how many."""
    cold = epoch(now) - store.policy.lifecycle.warm_days * _DAY
    where = f"status = 'active' AND coalesce(last_used_at, created_at) < {cold!r}"
    why = f"idle over {store.policy.lifecycle.warm_days} days"
    return _mark(store, where, "archived", "archive", now, why)


def _mark(
    store: NarrativeStore, where: str, status: str, action: Any, now: datetime, why: str
) -> int:
    store.flush_usage()  # a use not yet written could keep a row warm
    rows = store._rows(where, ("id", "user_id"))
    if rows:
        store.table.update(where=_ids(rows), values={"status": status})
        store._record(
            [system_row(r["user_id"], action, now, r["id"], f"narrative: {why}") for r in rows]
        )
    return len(rows)


def _unit(vectors: Sequence[Sequence[float]]) -> np.ndarray[Any, Any]:
    m = np.asarray(vectors, dtype=np.float32)
    unit: np.ndarray[Any, Any] = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return unit


def merge_recurring(store: NarrativeStore, now: datetime) -> int:
    """Fold recurring questions into tags; return how many questions were folded.

    Per user: an active question at least ``merge_similarity`` similar to an existing tag joins
    it (the tag counts one more). The other questions of the last ``merge_window`` are grouped
    greedily, oldest first, each joining the first group whose first question it is similar
    to; a group of at least ``merge_count`` becomes a new tag (the newest wording, the mean
    vector, the group's most common intent) and its questions are marked ``merged`` into it.
    History is kept: merged questions stay in ``export``."""
    life = store.policy.lifecycle
    store.flush_usage()
    since = epoch(now) - life.merge_days * _DAY
    rows = store._rows(
        f"status = 'active' AND (kind = 'tag' OR (kind = 'question' AND created_at >= {since!r}))",
        (*COLUMNS, "vector"),
    )
    by_user: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
        by_user.setdefault(r["user_id"], []).append(r)
    folded = 0
    for user_rows in by_user.values():
        folded += _merge_user(store, user_rows, now)
    return folded


def _merge_user(store: NarrativeStore, rows: list[dict[str, Any]], now: datetime) -> int:
    life = store.policy.lifecycle
    tags = [r for r in rows if r["kind"] == "tag"]
    questions = [r for r in rows if r["kind"] == "question"]
    if not questions:
        return 0
    qv = _unit([q["vector"] for q in questions])
    joined: dict[str, list[dict[str, Any]]] = {}
    rest: list[int] = []
    if tags:
        sims = qv @ _unit([t["vector"] for t in tags]).T
        for i, q in enumerate(questions):
            best = int(np.argmax(sims[i]))
            if sims[i, best] >= life.merge_similarity:
                joined.setdefault(tags[best]["id"], []).append(q)
            else:
                rest.append(i)
    else:
        rest = list(range(len(questions)))
    groups: list[list[int]] = []
    for i in rest:
        for g in groups:
            if float(qv[i] @ qv[g[0]]) >= life.merge_similarity:
                g.append(i)
                break
        else:
            groups.append([i])
    audit: list[dict[str, Any]] = []
    new_tags: list[dict[str, Any]] = []
    for g in groups:
        if len(g) < life.merge_count:
            continue
        members = [questions[i] for i in g]
        tag = _tag_row(store, members, qv[g].mean(axis=0), now)
        new_tags.append(tag)
        joined[tag["id"]] = members
    if new_tags:
        store.table.add(new_tags)
    folded = 0
    for tag_id, members in joined.items():
        store.table.update(where=_ids(members), values={"status": "merged", "merged_into": tag_id})
        if not any(t["id"] == tag_id for t in new_tags):
            store.table.update(
                where=f"id = {quote(tag_id)}", values_sql={"count": f"count + {len(members)}"}
            )
        uid = members[0]["user_id"]
        why = f"narrative: {len(members)} similar questions into tag {tag_id}"
        audit.append(system_row(uid, "merge", now, tag_id, why))
        folded += len(members)
    store._record(audit)
    return folded


def _tag_row(
    store: NarrativeStore, members: list[dict[str, Any]], mean: np.ndarray[Any, Any], now: datetime
) -> dict[str, Any]:
    newest = members[-1]
    intents = Counter(m["intent_type"] for m in members if m["intent_type"])
    vector = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return {
        **{k: newest[k] for k in COLUMNS},
        "id": uuid.uuid4().hex,
        "session_id": None,
        "kind": "tag",
        "intent_type": intents.most_common(1)[0][0] if intents else None,
        "created_at": epoch(now),
        "valid_until": None,
        "status": "active",
        "count": len(members),
        "merged_into": None,
        "access_count": 0,
        "last_used_at": None,
        "vector": vector.astype(np.float32).tolist(),
    }


def deprecate(store: NarrativeStore, accessor: Accessor, topic: str) -> list[Summary]:
    """The user said they understand ``topic`` now (我懂了): deprecate their active questions
    and tags about it (at least ``merge_similarity`` similar); return what was deprecated."""
    require_user(accessor)
    now = store._clock()
    vector = store.embedder.embed([topic], query=True)[0]
    hits = store.search(
        accessor,
        vector,
        limit=1000,
        min_score=store.policy.lifecycle.merge_similarity,
        kinds=("question", "tag"),
    )
    rows = [{"id": h.summary.id} for h in hits]
    if not rows:
        store._record([audit_row(accessor, "deprecate", now, None, "narrative: nothing related")])
        return []
    where = f"user_id = {quote(accessor.user_id)} AND " + _ids(rows)
    store.table.update(where=where, values={"status": "deprecated"})
    why = "narrative: the user said they understand it"
    store._record([audit_row(accessor, "deprecate", now, r["id"], why) for r in rows])
    return [replace(h.summary, status="deprecated") for h in hits]
