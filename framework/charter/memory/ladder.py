"""The retrieval ladder (seed 001 §2.2, ARCHITECTURE §7) and the memory of one user across
every store.

A question is answered by the first step that finds something, cheapest and most precise
first; the vector search only runs when nothing exact did:

1. ``entity`` — an identifier the user wrote (an order number, contract A-2024-001) that is the
   ``entity_ref`` of a live fact: the fact channel answers directly. Seed 001: vector similarity
   does not know entity boundaries ("上次说的合同第三条" once returned another contract's clause).
2. ``intent`` — the turn's intent type narrows both channels: facts with that intent, and
   summaries with it ranked by similarity (the intent is the filter: no ``min_score``, as
   "有哪些待办事项" wants the user's to-dos however they were worded).
3. ``keyword`` — words the turn names (a product, a term): summaries containing every one
   (full-text search), and facts whose key or value holds them.
4. ``vector`` — the hybrid step: the user's summaries most relevant to the question, BM25
   over their words fused with the similarity of their vectors
   (``charter.memory.narrative.recall``), times a bounded recency boost (a tie-breaker:
   ``MemoryPolicy.boost``), ``top_k`` of the pack, when the question's best summary is at
   least ``min_score`` similar or shares enough of its words (a gate on the question: restated
   facts below the floor still come).
   Warm memories are searched as hot ones; only archived (and expired, deprecated, merged)
   ones are not. The step keeps its name, ``vector``, for the traces that count it.

Every step is scoped to the accessor's user, domain use, role and consent by the store it
reads, and never returns an expired, deprecated, merged or archived memory. The result names
the step that answered and why, lists what each step tried, and gives each summary's scores
(BM25, similarity, fused relevance, recency boost, final score), for the turn's trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from charter.memory.crypto import FORGOTTEN
from charter.memory.facts import FactStore
from charter.memory.facts.access import privileged_refusal, require_user
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative.recall import Hit
from charter.memory.records import Accessor, Fact
from charter.memory.short_term import ShortTermMemory

Step = Literal["entity", "intent", "keyword", "vector", "none"]
STEPS: tuple[Step, ...] = ("entity", "intent", "keyword", "vector")


@dataclass(frozen=True)
class Recollection:
    """What the ladder found: the ``step`` that answered (``none`` when none did), why, the
    facts and summaries it returned, and one line per step tried."""

    step: Step
    reason: str
    facts: tuple[Fact, ...] = ()
    summaries: tuple[Hit, ...] = ()
    tried: tuple[tuple[Step, str], ...] = field(default=())

    @property
    def found(self) -> bool:
        return bool(self.facts or self.summaries)

    def trace(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "reason": self.reason,
            "facts": [f.id for f in self.facts],
            "summaries": [h.summary.id for h in self.summaries],
            "scores": [h.scores() for h in self.summaries],
            "tried": [{"step": s, "result": r} for s, r in self.tried],
        }


class LayeredMemory:
    """The long-term memory of the agent: the fact channel, optionally the narrative channel
    (LanceDB) and short-term memory. ``recall`` runs the ladder; ``forget`` and ``export``
    reach every store."""

    def __init__(
        self,
        facts: FactStore,
        narrative: NarrativeStore | None = None,
        short_term: ShortTermMemory | None = None,
    ) -> None:
        self.facts = facts
        self.narrative = narrative
        self.short_term = short_term
        self.policy = facts.policy

    def recall(
        self,
        accessor: Accessor,
        query: str,
        *,
        entity_refs: Sequence[str] = (),
        intent: str | None = None,
        keywords: Sequence[str] = (),
        top_k: int | None = None,
    ) -> Recollection:
        k = self.policy.top_k if top_k is None else top_k
        tried: list[tuple[Step, str]] = []

        def answer(
            step: Step, why: str, facts: Sequence[Fact], hits: Sequence[Hit]
        ) -> Recollection:
            tried.append((step, why))
            return Recollection(step, why, tuple(facts[:k]), tuple(hits[:k]), tuple(tried))

        refs = [r for r in dict.fromkeys(entity_refs) if r.strip()]
        if refs:
            facts = [f for ref in refs for f in self.facts.by_entity(accessor, ref)]
            if facts:
                named = ", ".join(sorted({f.entity_ref or "" for f in facts}))
                return answer("entity", f"entity_ref {named}: {len(facts)} live facts", facts, ())
            tried.append(("entity", f"no live fact for entity_ref {', '.join(refs)}"))
        else:
            tried.append(("entity", "the input names no entity"))

        if intent:
            facts = self.facts.by_intent(accessor, intent, limit=k)
            hits = self._search(accessor, query, k, intent=intent, floor=-1.0)
            if facts or hits:
                why = f"intent {intent}: {len(facts)} facts, {len(hits)} summaries"
                return answer("intent", why, facts, hits)
            tried.append(("intent", f"intent {intent}: nothing of that intent"))
        else:
            tried.append(("intent", "no intent for this turn"))

        words = [w for w in dict.fromkeys(keywords) if len(w.strip()) >= 2]
        if words:
            facts = self.facts.search_text(accessor, words, limit=k)
            hits = (
                self.narrative.search_keywords(accessor, words, limit=k) if self.narrative else []
            )
            if facts or hits:
                why = f"keywords {', '.join(words)}: {len(facts)} facts, {len(hits)} summaries"
                return answer("keyword", why, facts, hits)
            tried.append(("keyword", f"keywords {', '.join(words)}: no match"))
        else:
            tried.append(("keyword", "no keywords of two characters or more"))

        if self.narrative is None:
            tried.append(("vector", "no narrative channel"))
        else:
            hits = self._search(accessor, query, k)
            if hits:
                why = f"{len(hits)} summaries" + self._floor(hits)
                return answer("vector", why, (), hits)
            tried.append(
                (
                    "vector",
                    f"no summary at least {self.policy.min_score} similar"
                    " or sharing the question's words",
                )
            )
        return Recollection("none", "no step found a memory", tried=tuple(tried))

    def _search(
        self,
        accessor: Accessor,
        query: str,
        k: int,
        *,
        intent: str | None = None,
        floor: float | None = None,
    ) -> list[Hit]:
        if self.narrative is None or not query.strip():
            return []
        return self.narrative.search(accessor, query, limit=k, intent=intent, min_score=floor)

    def _floor(self, hits: Sequence[Hit]) -> str:
        if not hits:
            return ""
        best, floor = max(h.similarity for h in hits), self.policy.min_score
        if best >= floor - 1e-6:  # float32 vectors: as the store admits them
            return f" (best similarity {best:.3f} ≥ min_score {floor})"
        return f" (best similarity {best:.3f} < min_score {floor}: found by their words)"

    def export(self, accessor: Accessor) -> dict[str, Any]:
        """The fact store's export (facts and audit trail) with the narrative summaries."""
        summaries = self.narrative.export(accessor) if self.narrative else []
        data = self.facts.export(accessor)
        return {**data, "summaries": summaries}

    def forget(self, accessor: Accessor, *, forgotten_as: str = FORGOTTEN) -> dict[str, int]:
        """Remove the user from every store; the fact store goes last, so the audit trail it
        deletes includes the other stores' rows and only the forget rows remain, the user
        named ``forgotten_as`` (``charter.memory.crypto.forgotten_id``)."""
        require_user(accessor)
        why = privileged_refusal(accessor)
        if why is not None:  # refused before any store changes; the fact store audits it
            self.facts.forget(accessor)
            raise PermissionError(f"forget refused: {why}")  # pragma: no cover - it raised
        counts = {"summaries": 0, "turns": 0}
        if self.narrative is not None:
            counts["summaries"] = self.narrative.forget(accessor, forgotten_as=forgotten_as)
        if self.short_term is not None:
            counts["turns"] = self.short_term.forget(accessor.user_id)
        counts["facts"] = self.facts.forget(accessor, forgotten_as=forgotten_as)
        return counts
