"""Where the intents are in an input, and each intent's part of it (step 4 of
``charter.goals.planner``): the positions of an intent's words, the input's clauses (split at
punctuation and at 顺便/另外/然后...), and the clauses each intent owns, so that one clause's
date does not leak into another clause's goal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import regex

from charter.compile.env import Env
from charter.compile.specs import goals as S

_CLAUSE = regex.compile(r"[，,。；;！!？?\n]+|顺便|另外|还有|同时|然后|以及|并且")


def positions(env: Env, intent: S.IntentSpec, ids: Mapping[str, int]) -> list[int]:
    """Where the intent's words start in the input, in order; ``ids``: the literal ids of the
    planner's literal table."""
    hits = env.hits("input", env.input)
    return sorted(
        start for lit in intent.literals if lit in ids for start, _ in hits.get(ids[lit], ())
    )


def clauses(text: str) -> list[tuple[int, int]]:
    """The spans of the input's clauses, separators left out."""
    out, pos = [], 0
    for m in _CLAUSE.finditer(text):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        out.append((pos, len(text)))
    return out


def segments(text: str, where: Sequence[tuple[str, Sequence[int]]]) -> dict[str, str]:
    """Each intent's part of the input: the clauses holding its words, and the clauses
    after them that hold no intent's words (我要挂号，皮肤科，明天上午: all three clauses are
    the registration's); clauses before the first intent go to the first."""
    spans = clauses(text)
    owners: list[list[str]] = [
        [iid for iid, ps in where if any(s <= p < e for p in ps)] for s, e in spans
    ]
    last: list[str] = next((o for o in owners if o), [])
    for n, owner in enumerate(owners):
        if owner:
            last = owner
        else:
            owners[n] = last
    out = {}
    for iid, _ in where:
        mine = [text[s:e] for (s, e), owner in zip(spans, owners, strict=True) if iid in owner]
        out[iid] = "，".join(mine) if mine else text
    return out
