"""The narrative channel (ARCHITECTURE §7): short summaries of what a user talked about, with
embeddings, in LanceDB — one table, one logical namespace per user.

Isolation is structural, as in the fact channel: every method that reaches a summary takes an
``Accessor``, and every query it runs starts with ``user_id = '<accessor.user_id>'`` as a
*prefilter* (LanceDB filters before it ranks, through a BTree index on the column), so another
user's rows are never even candidates. Domain scope and consent are part of the same filter;
role visibility is checked on each row returned. Only ``active`` rows still valid are
searched, whether or not the lifecycle jobs (``lifecycle``) have run; age is no
filter: a warm row is searched until the lifecycle archives it.

Search is exact and relevance-first (``recall``): one prefiltered scan brings
the user's rows with their texts and vectors (a user has hundreds of summaries, not
millions); the cosine of every row and BM25 over their words are fused, and the result is
multiplied by a bounded recency boost (``MemoryPolicy.boost``: at most × 1.02 by default), so
that recency breaks ties and never buries an old relevant memory. ``min_score`` is on the
cosine scale and gates the question, not each row: once the best row passes it (or shares
enough of the question's words), the most relevant rows are returned, restated evidence
below the floor included.

What is stored comes from ``WritePipeline.prepare_summary``: personal data already scrubbed,
so neither the text, nor its vector, nor the full-text index holds a raw ID or phone number.
Uses (access count, last use) are collected in memory and written by ``flush_usage``: a recall
does not rewrite the table. Given ``UpkeepSettings`` the store writes them in bounded batches
and compacts itself after every ``compact_every`` writes, on a thread of its own (``upkeep``);
without, only ``optimize`` (the lifecycle pass) and ``close`` do.

``forget`` deletes the user's rows, compacts the files and drops every older version of the
table, so no byte of the user's summaries or vectors stays on disk.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from charter.compile.specs.memory import MemoryPolicy
from charter.contracts.models import Embedder
from charter.memory.facts.access import audit_row, privileged_refusal, require_user
from charter.memory.narrative import compaction, recall, usage
from charter.memory.narrative.admin import NarrativeAdmin
from charter.memory.narrative.recall import Hit
from charter.memory.narrative.rows import (
    COLUMNS,
    TABLE,
    epoch,
    quote,
    to_summary,
)
from charter.memory.narrative.upkeep import Upkeep, UpkeepSettings
from charter.memory.records import Accessor, PreparedSummary, Summary
from charter.store.clock import Clock, utcnow

_DAY = 86400.0
# rows a keyword query may bring back for the containment check
POOL = 512
# the most rows of one user (after the prefilter) a search ranks: far above the hundreds to
# few thousands a user has; beyond it the newest rows of the scan order are not seen
CANDIDATES = 100_000
# a read moves to the newest version of the table when its own is older than this: another
# process's summaries are seen, and no read stays on a version whose files a compaction
# (which keeps 10 minutes of versions) may have dropped
READ_CONSISTENCY_S = 5.0
# how long close waits for an upkeep pass in progress (a compaction) before its last flush
CLOSE_WAIT_S = 5.0
AuditSink = Callable[[list[dict[str, Any]]], None]


def lancedb_module() -> Any:
    try:
        import lancedb
    except ImportError as e:  # the narrative extra is not installed
        raise RuntimeError(
            "the narrative channel needs LanceDB: pip install 'charter[narrative]'"
        ) from e
    return lancedb


def _all_bigrams(match: Any, word: str, op: Any) -> Any:
    """A full-text clause matching rows that hold every bigram of ``word``."""
    return match(word, "text", operator=op.AND)


def _schema(dim: int) -> Any:
    import pyarrow as pa

    text, f64, i64 = pa.string(), pa.float64(), pa.int64()
    fields = [pa.field(name, text) for name in COLUMNS[:9]]
    fields += [pa.field("created_at", f64, nullable=False), pa.field("valid_until", f64)]
    fields += [pa.field("status", text), pa.field("count", i64), pa.field("merged_into", text)]
    fields += [pa.field("access_count", i64), pa.field("last_used_at", f64)]
    fields += [pa.field("embedder", text), pa.field("vector", pa.list_(pa.float32(), dim))]
    return pa.schema(fields)


class NarrativeStore(NarrativeAdmin):
    """Summaries of one LanceDB directory (``path``), embedded with ``embedder``.

    ``embedder`` may be None to administer a directory (list, export, forget, lifecycle)
    without loading a model; adding and searching by text then need one.
    ``audit`` receives the audit rows of every read, write, refusal, export and deletion (the
    fact store's ``record_audit`` keeps them with the facts' trail)."""

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | None,
        policy: MemoryPolicy,
        *,
        audit: AuditSink | None = None,
        clock: Clock = utcnow,
        upkeep: UpkeepSettings | None = None,
    ) -> None:
        self._db = lancedb_module().connect(
            str(path), read_consistency_interval=timedelta(seconds=READ_CONSISTENCY_S)
        )
        self.path = Path(path)
        self._embedder = embedder
        self.policy = policy
        self._audit = audit
        self._clock = clock
        self._usage = usage.Buffer()
        self._indexed = False
        self._index_lock = threading.Lock()
        self._flushing = threading.RLock()  # a flush and forget's rewrite never interleave
        self.writes_since_compaction = 0  # appends and batches of uses, this process's
        self._compaction = compaction.lock_for(str(path))
        self.upkeep = Upkeep(self, upkeep) if upkeep is not None else None
        if TABLE in self._db.list_tables().tables:
            self.table = self._db.open_table(TABLE)
        else:
            self.table = self._db.create_table(TABLE, schema=_schema(self.embedder.dim))
        if embedder is not None:
            self._check_embedder(embedder)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise RuntimeError(
                f"{self.path} was opened without an embedder: texts cannot be embedded"
            )
        return self._embedder

    def _check_embedder(self, embedder: Embedder) -> None:
        got = self.table.search().select(["embedder"]).limit(1).to_list()
        if got and got[0]["embedder"] != embedder.name:
            raise ValueError(
                f"{self.path} holds vectors of embedder {got[0]['embedder']!r}, not "
                f"{embedder.name!r}: vectors of two models cannot be compared"
            )
        size = self.table.schema.field("vector").type.list_size
        if size != embedder.dim:
            raise ValueError(
                f"{self.path} holds vectors of {size} dimensions, not {embedder.dim} "
                f"(embedder {embedder.name!r}): vectors of two models cannot be compared"
            )

    # ---- audit ---------------------------------------------------------------------------

    def _record(self, rows: list[dict[str, Any]]) -> None:
        if self._audit is not None and rows:
            self._audit(rows)

    def _privileged(self, accessor: Accessor, action: str) -> None:
        require_user(accessor)
        why = privileged_refusal(accessor)
        if why is not None:
            self._record(
                [
                    audit_row(
                        accessor, "deny", self._clock(), None, f"{action}: {why}", allowed=False
                    )
                ]
            )
            raise PermissionError(f"{action} refused: {why}")

    # ---- writing -------------------------------------------------------------------------

    def add(self, accessor: Accessor, summaries: Sequence[PreparedSummary]) -> list[Summary]:
        """Embed and store prepared summaries of ``accessor``'s user (one append)."""
        require_user(accessor)
        if not summaries:
            return []
        now = self._clock()
        for s in summaries:
            why = (
                "the summary belongs to another user"
                if s.user_id != accessor.user_id
                else None
                if self.policy.may_use(s.domain, accessor.use)
                else f"domain {s.domain} is not writable for use {accessor.use}"
            )
            if why is not None:
                self._record(
                    [audit_row(accessor, "deny", now, None, f"write: {why}", allowed=False)]
                )
                raise PermissionError(f"write refused: {why}")
        vectors = self.embedder.embed([s.text for s in summaries])
        rows = [self._row(s, v, now) for s, v in zip(summaries, vectors, strict=True)]
        self.table.add(rows)
        self.ensure_indexes()  # rows added later are searched too, unindexed until optimize
        self._wrote()
        self._record([audit_row(accessor, "write", now, r["id"], "narrative") for r in rows])
        return [to_summary(r) for r in rows]

    def _row(self, s: PreparedSummary, vector: Sequence[float], now: datetime) -> dict[str, Any]:
        return {
            "id": uuid.uuid4().hex,
            "user_id": s.user_id,
            "session_id": s.session_id,
            "kind": s.kind,
            "text": s.text,
            "domain": s.domain,
            "memory_type": s.memory_type,
            "intent_type": s.intent_type,
            "consent_source": s.consent_source,
            "created_at": epoch(s.created_at or now),
            "valid_until": None if s.valid_until is None else epoch(s.valid_until),
            "status": "active",
            "count": 1,
            "merged_into": None,
            "access_count": 0,
            "last_used_at": None,
            "embedder": self.embedder.name,
            "vector": list(vector),
        }

    # ---- reading -------------------------------------------------------------------------

    def scope(self, accessor: Accessor, now: datetime) -> str:
        """The filter every read starts with: this user, readable domains, consent held,
        active (not archived, expired, deprecated or merged) and still valid. Age is no
        filter: a warm memory is searched like a hot one until the lifecycle archives it."""
        require_user(accessor)
        domains = ", ".join(quote(d) for d in sorted(self.policy.readable_domains(accessor.use)))
        consent = "consent_source IS NULL"
        if accessor.consent is not None:
            consent = f"({consent} OR consent_source = {quote(accessor.consent)})"
        t = epoch(now)
        return (
            f"user_id = {quote(accessor.user_id)} AND domain IN ({domains}) AND {consent}"
            f" AND status = 'active' AND (valid_until IS NULL OR valid_until > {t!r})"
        )

    def weight(self, row: Mapping[str, Any], now: float) -> float:
        """The bounded recency × decay boost of a row at ``now`` (epoch seconds), in
        [1, 1 + recency_boost]: ``MemoryPolicy.boost``."""
        idle = (now - (row["last_used_at"] or row["created_at"])) / _DAY
        age = (now - row["created_at"]) / _DAY
        return self.policy.boost(age, idle)

    def search(
        self,
        accessor: Accessor,
        query: str | Sequence[float],
        *,
        limit: int | None = None,
        min_score: float | None = None,
        intent: str | None = None,
        kinds: Iterable[str] = ("summary", "question", "tag"),
    ) -> list[Hit]:
        """The user's summaries most relevant to ``query``, best first.

        A text is embedded as a question and also cut into words: BM25 over the user's rows
        and cosine similarity are fused (``recall``); a vector has only its
        similarity (scaled as in the fusion, so the boost weighs the same). For a text the
        gate is on the question: when its best row is at least ``min_score`` similar or
        shares enough of its words, the ``limit`` most relevant rows are returned, restated
        evidence below the floor included; otherwise none. For a vector each row must be at
        least ``min_score`` similar (a similarity lookup). The fused relevance is multiplied
        by the row's bounded recency boost (``weight``); ties go to the more similar row, then
        the smaller id (``recall.order``)."""
        now = self._clock()
        text: str | None = None
        vector: Sequence[float]
        if isinstance(query, str):
            text, vector = query, self.embedder.embed([query], query=True)[0]
        else:
            vector = query
        where = self.scope(accessor, now) + " AND kind IN (" + ", ".join(map(quote, kinds)) + ")"
        if intent is not None:
            where += f" AND intent_type = {quote(intent)}"
        rows, matrix = self._candidates(where)
        floor = self.policy.min_score if min_score is None else min_score
        ranked = recall.rank(self.policy, rows, matrix, vector, text, floor, epoch(now))
        return self._returned(accessor, now, ranked, limit)

    def _candidates(self, where: str) -> tuple[list[dict[str, Any]], np.ndarray[Any, Any]]:
        """Every row matching ``where`` (one user's: the prefilter) without its vector, and
        the vectors as a matrix, in one scan."""
        found = (
            self.table.search()
            .where(where)
            .select([*COLUMNS, "vector"])
            .limit(CANDIDATES)
            .to_arrow()
        )
        if found.num_rows == 0:
            return [], np.zeros((0, 0), dtype=np.float32)
        column = found.column("vector").combine_chunks()
        matrix = np.asarray(column.flatten(), dtype=np.float32).reshape(found.num_rows, -1)
        return found.drop_columns(["vector"]).to_pylist(), matrix

    def search_keywords(
        self, accessor: Accessor, keywords: Sequence[str], *, limit: int | None = None
    ) -> list[Hit]:
        """The user's summaries containing every keyword (full-text search over character
        bigrams, then an exact containment check), best BM25 first."""
        words = [w.strip().lower() for w in keywords if len(w.strip()) >= 2]
        if not words:
            return []
        from lancedb.query import BooleanQuery, MatchQuery, Occur
        from lancedb.query import FullTextOperator as Op

        now = self._clock()
        fts = BooleanQuery([(Occur.MUST, _all_bigrams(MatchQuery, w, Op)) for w in words])
        rows = (
            self.table.search(fts, query_type="fts")
            .where(self.scope(accessor, now), prefilter=True)
            .select([*COLUMNS, "_score"])
            .limit(POOL)
            .to_list()
        )
        found = [r for r in rows if all(w in r["text"].lower() for w in words)]
        ranked = [
            Hit(to_summary(r), 0.0, float(r["_score"]), bm25=float(r["_score"]))
            for r in sorted(found, key=lambda r: (-r["_score"], r["id"]))
        ]
        return self._returned(accessor, now, ranked, limit)

    def _returned(
        self, accessor: Accessor, now: datetime, ranked: Iterable[Hit], limit: int | None
    ) -> list[Hit]:
        cap = self.policy.top_k if limit is None else limit
        hits: list[Hit] = []
        used: list[tuple[str, str]] = []
        audit: list[dict[str, Any]] = []
        for hit in ranked:
            if len(hits) == cap:
                break
            s = hit.summary
            if not self.policy.may_see(accessor.role, s.memory_type, s.kind):
                why = f"role {accessor.role} may not see {s.kind} ({s.memory_type})"
                audit.append(audit_row(accessor, "deny", now, s.id, f"read: {why}", allowed=False))
                continue
            hits.append(hit)
            audit.append(audit_row(accessor, "read", now, s.id, "narrative"))
            used.append((s.id, s.user_id))
        if not hits:
            audit.append(audit_row(accessor, "read", now, None, "narrative: nothing matched"))
        self._record(audit)
        if used:
            self._usage.record(used, epoch(now))
            if self.upkeep is not None:
                self.upkeep.nudge()
        return hits

    def _rows(self, where: str, columns: Sequence[str] = COLUMNS) -> list[dict[str, Any]]:
        """Rows matching a filter (for this package's lifecycle jobs, which build ``where``
        themselves; not a way to read memory)."""
        count = self.table.count_rows(where)
        if count == 0:
            return []
        found: list[dict[str, Any]] = (
            self.table.search().where(where).select(list(columns)).limit(count).to_list()
        )
        return found

    def close(self) -> None:
        """Stop the upkeep thread (a pass in progress may finish, within ``CLOSE_WAIT_S``) and
        write the uses still collected: one batch."""
        if self.upkeep is not None:
            self.upkeep.stop(CLOSE_WAIT_S)
        self.flush_usage()
