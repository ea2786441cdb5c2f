"""One pass of every memory lifecycle job, for ``charter memory maintain`` (a cron job) and for
``charter serve``, which runs it every ``serve.maintain_every``.

Reads never wait for these jobs (an outlived fact or summary is filtered by its validity, a
cold one by its age), but what they record is what listings, exports and the health report
read: ``decay_compliance`` counts the outlived facts marked ``expired`` or ``archived``, so a
store nobody maintains reads 0 of N however well its reads behave.

The jobs, in order, each returning a count and never a memory:

* facts: ``expire`` (outlived → ``expired``), ``decay`` (weights for the idle time),
  ``archive_cold`` (tiers; cold → ``archived``) — ``facts.lifecycle``;
* summaries, when there is a narrative directory: ``expire``, ``archive_cold``,
  ``merge_recurring`` (recurring questions → one tag, at the embedder's calibrated
  threshold), ``deprecate_merged`` (questions folded into a deprecated tag) — then
  ``NarrativeStore.optimize`` (pending uses written, indexes refreshed, small appends
  compacted).

Each job is idempotent: running the pass twice, or after a pause, gives the state one pass
would have given at that time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from charter.memory.facts import FactStore
from charter.memory.narrative import NarrativeStore
from charter.memory.narrative import lifecycle as nl
from charter.store.clock import as_utc


@dataclass(frozen=True)
class MaintenanceReport:
    """How many rows each job changed in one pass."""

    facts_expired: int = 0
    facts_decayed: int = 0  # weights changed
    facts_archived: int = 0
    summaries_expired: int = 0
    summaries_archived: int = 0
    questions_merged: int = 0  # questions folded into a tag
    questions_deprecated: int = 0  # folded into a tag the user said they understand
    narrative: bool = False  # whether a narrative directory was maintained

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if k != "narrative"}

    @property
    def total(self) -> int:
        return sum(self.counts().values())

    def lines(self) -> list[str]:
        """One line per job, as ``charter memory maintain`` prints them."""
        rows = [
            ("facts expired", self.facts_expired),
            ("facts decayed", self.facts_decayed),
            ("facts archived", self.facts_archived),
        ]
        if self.narrative:
            rows += [
                ("summaries expired", self.summaries_expired),
                ("summaries archived", self.summaries_archived),
                ("questions merged", self.questions_merged),
                ("questions deprecated", self.questions_deprecated),
            ]
        return [f"  {name:<21} {n}" for name, n in rows]


def maintain(
    facts: FactStore, narrative: NarrativeStore | None = None, now: datetime | None = None
) -> MaintenanceReport:
    """Run every lifecycle job once at ``now`` (default: the fact store's clock) under the
    fact store's policy (the narrative store's for its jobs)."""
    at = as_utc(now) if now is not None else None
    expired = facts.expire(at)
    decayed = facts.decay(at)
    archived = facts.archive_cold(at)
    if narrative is None:
        return MaintenanceReport(expired, decayed, archived)
    when = at or as_utc(narrative._clock())
    report = MaintenanceReport(
        expired,
        decayed,
        archived,
        summaries_expired=nl.expire(narrative, when),
        summaries_archived=nl.archive_cold(narrative, when),
        questions_merged=nl.merge_recurring(narrative, when),
        questions_deprecated=nl.deprecate_merged(narrative, when),
        narrative=True,
    )
    narrative.optimize()
    return report
