"""Sample values for rendering response templates at compile time (``charter.compile.
response_check``): a slot's values in the pack's planner tests (goals.yaml ``tests:``), its
default, else one by its type or extractor; a result's fields from its output schema
(``examples``, ``const``, ``enum``, ``format``, a pattern-matching guess, the type); and the
scopes each event's templates can see. Also the statuses the output schemas enumerate, which a
rephrased reply must keep.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import regex

from charter.compile.specs.goals import DEFAULT_AGGREGATE, GoalsSpec, IntentSpec, SlotSpec
from charter.compile.specs.skills import SkillsSpec
from charter.compile.specs.slots import fill_slots
from charter.contracts.rules import Formatter
from charter.pack.typed.goals import OpenGoal, Plan

_GUESSES = ("1234", "12345.60", "100.00", "2024-05-01", "DD202405010001", "示例", "A1", "1")


# ---- sample values ----------------------------------------------------------------------------


def slot_samples(goals: GoalsSpec | None) -> dict[str, dict[str, list[Any]]]:
    """intent -> slot -> the values the planner tests give it (in order, distinct)."""
    out: dict[str, dict[str, list[Any]]] = {}
    if goals is None:
        return out

    def add(intent: str, slots: Mapping[str, Any]) -> None:
        for k, v in slots.items():
            seen = out.setdefault(intent, {}).setdefault(k, [])
            if v not in seen and v not in (None, "", []):
                seen.append(v)

    # a case carries its goals and plan as written (JSON), read as goals.yaml's models
    for case in goals.cases:
        for planned in Plan.read(case.plan).goals:
            if planned is not None and planned.intent is not None:
                add(planned.intent, planned.slots)
                add(planned.intent, planned.inherited)
        for g in case.goals:
            open_goal = OpenGoal.read(g)
            if open_goal.intent is not None:
                add(open_goal.intent, open_goal.slots)
    return out


def _by_type(slot: SlotSpec) -> Any:
    if slot.default not in (None, ""):
        return slot.default
    if slot.extractor == "money" or slot.type == "number":
        return "5000"
    if slot.extractor in ("time", "date") or slot.type in ("date", "time"):
        return "2024-05-02"
    return "示例"


def slot_values(
    intent: IntentSpec, samples: Mapping[str, Mapping[str, list[Any]]]
) -> dict[str, list[Any]]:
    """Two sample values per slot where the tests have them (old and new of a correction)."""
    mine = samples.get(intent.id, {})
    out = {}
    for s in intent.slots:
        values = list(mine.get(s.name, []))
        if not values:
            values = [_by_type(s)]
        out[s.name] = values
    for name in intent.kept:  # a result's field kept in the goal (a booking number)
        out[name] = list(mine.get(name, [])) or ["示例"]
    return out


def schema_sample(schema: Any, depth: int = 0) -> Any:
    """A value the schema accepts, for rendering templates at compile time (None: no idea)."""
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    for key in ("examples",):
        found = schema.get(key)
        if isinstance(found, list) and found:
            return found[0]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    fmt = schema.get("format")
    if kind == "string" or (kind is None and ("pattern" in schema or fmt)):
        if fmt == "date":
            return "2024-05-01"
        if fmt == "date-time":
            return "2024-05-01T10:00:00+08:00"
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                compiled = regex.compile(pattern)
            except regex.error:
                return None
            return next((g for g in _GUESSES if compiled.search(g)), None)
        return "示例"
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 100
    if kind == "boolean":
        return True
    if kind == "array":
        item = schema_sample(schema.get("items"), depth + 1)
        return [item] if item is not None else None
    if kind == "object" or "properties" in schema:
        out = {}
        for name, sub in (schema.get("properties") or {}).items():
            value = schema_sample(sub, depth + 1)
            if value is not None:
                out[name] = value
        return out
    return None


def statuses(skills: SkillsSpec | None) -> tuple[str, ...]:
    """The Chinese words the output schemas enumerate (已发货, 运输中, 呼吸内科…)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for v in node.get("enum", ()) if isinstance(node.get("enum"), list) else ():
                if isinstance(v, str) and any("\u4e00" <= ch <= "\u9fff" for ch in v):
                    found.add(v)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for c in skills.contracts if skills is not None else ():
        walk(c.output_schema)
    return tuple(sorted(found))


# ---- the scopes each entry is rendered in ------------------------------------------------------


def event_scopes(
    event: str,
    intent: IntentSpec | None,
    values: Mapping[str, list[Any]],
    goals: GoalsSpec | None,
    constants: Mapping[str, Any],
    formatters: Mapping[str, Formatter] | None = None,
) -> Iterator[dict[str, Any]]:
    """The sample scopes an event's templates may see: with each slot's first sample value,
    then once more for each other sample value of a slot (a ``when: kind == "换货"`` meets
    its value), one scope per slot for the slot events. ``{goal}`` and a question are written
    with the formatters the runtime applies (``{phone|masked_phone}``)."""
    first = {k: v[0] for k, v in values.items()}
    variants = [first] + [{**first, name: value} for name, vs in values.items() for value in vs[1:]]
    for slots in variants:
        yield from _scopes(event, intent, slots, values, goals, constants, formatters or {})


def _scopes(
    event: str,
    intent: IntentSpec | None,
    slots: Mapping[str, Any],
    values: Mapping[str, list[Any]],
    goals: GoalsSpec | None,
    constants: Mapping[str, Any],
    formatters: Mapping[str, Formatter],
) -> Iterator[dict[str, Any]]:
    base: dict[str, Any] = {**slots, "slots": dict(slots)}
    if intent is not None:
        base["goal"] = fill_slots(intent.description, slots, formatters)
        base["intent"] = intent.describe
        if intent.handoff:
            base["ticket"] = "T-000001"
    if event in ("slot_asked", "resumed") and intent is not None:
        for s in intent.slots:
            if s.required and s.ask:
                question = fill_slots(s.ask, slots, formatters)
                asked = {**base, "slot": s.name, "label": s.label or None, "question": question}
                yield asked
                if s.regex and event == "slot_asked":
                    # a regex slot may pass over personal data the user gave for it (a card
                    # number for an order number): the question says it was not taken
                    yield {**asked, "refused": "身份证号"}
    elif event == "slot_corrected" and intent is not None:
        for s in intent.slots:
            vs = values.get(s.name, [])
            old, new = (vs[0], vs[1]) if len(vs) > 1 else (vs[0], vs[0]) if vs else (None, None)
            yield {**base, "slot": s.name, "label": s.label or None, "old": old, "new": new}
    elif event == "slot_carried" and intent is not None:
        for s in intent.slots:
            if s.carry is None:
                continue
            for value in values.get(s.name, [])[:1]:
                for source in ("session", "memory"):
                    yield {
                        **base,
                        "slot": s.name,
                        "label": s.label or None,
                        "value": value,
                        "source": source,
                    }
    elif event.startswith("confirmation_") and intent is None:
        intents = goals.intents if goals else ()
        described = [fill_slots(i.description, {}, formatters) for i in intents][:2]
        yield {"goals": described, "count": len(described)}
    elif event == "skill_failed":
        yield {
            **base,
            "skill": intent.skill.name if intent and intent.skill else "",
            "failure": "error",
        }
    elif event == "handed_off":
        message = (constants.get("messages") or {}).get("escalate", "")
        yield {**base, "ticket": "T-000001", "reason": "handoff", "message": message}
    elif event == "clarification_asked":
        names = [i.describe for i in (goals.intents if goals else ()) if not i.safety][:2]
        if names:
            yield {"first": names[0], "count": 1}
            yield {"first": names[0], "second": names[-1], "count": len(names)}
    elif event == "unanswered":
        abilities = [i.describe for i in (goals.intents if goals else ()) if not i.safety]
        yield {**base, "abilities": abilities} if intent is not None else {"abilities": abilities}
    else:
        yield base


def aggregate_scope(goals: GoalsSpec) -> dict[str, Any]:
    """What the ``unanswered`` reply to requests merged over the limit sees."""
    names = [i.describe for i in goals.intents[-2:]]
    label = goals.aggregate or DEFAULT_AGGREGATE
    return {"goal": f"{label}：" + "、".join(names), "members": names}


def applies(event: str, intent: IntentSpec | None, goals: GoalsSpec | None) -> bool:
    """Whether ``event`` can happen to a goal of ``intent`` (None: the pack-wide ones)."""
    if intent is None:
        if event.startswith("confirmation_"):
            return goals is not None and goals.confirm_split_over is not None
        # a person asked for, nothing the pack can answer, 算了 with nothing open; a question
        # the examples left open
        if event.startswith("clarification_"):
            return goals is not None and any(i.examples for i in goals.intents)
        return event in ("handed_off", "unanswered", "cancelled")
    if event.startswith("clarification_"):
        return False  # a question about which intent: told before any goal of one exists
    required = any(s.required for s in intent.slots)
    return {
        "slot_asked": required,
        "slot_corrected": bool(intent.slots),
        "slot_carried": any(s.carry for s in intent.slots),
        "resumed": required,
        "confirmation_asked": intent.confirm,
        "confirmation_accepted": intent.confirm,
        "already_done": intent.confirm,
        "confirmation_declined": intent.confirm,
        "skill_failed": intent.skill is not None,
        "handed_off": False,
        # a goal nothing of the pack can answer (no skill, no completed template) in strict mode
        "unanswered": intent.skill is None,
    }.get(event, True)


def _choices(schema: Any) -> list[Any]:
    """Every value a field's schema names (its ``examples``, then its ``enum``), distinct."""
    if not isinstance(schema, Mapping):
        return []
    out: list[Any] = []
    for key in ("examples", "enum"):
        for value in schema.get(key) or ():
            if value not in out:
                out.append(value)
    return out


def _variants(schema: Any) -> list[dict[str, Any]]:
    """The object schema's sample, then one variant per other value a field names (each enum
    value and example of ``status`` in turn, the others as sampled): what selects each of a
    template's alternatives (``when: status == "not_found"``)."""
    base = schema_sample(schema)
    if not isinstance(base, dict) or not isinstance(schema, Mapping):
        return [{}]
    out = [base]
    for name, sub in (schema.get("properties") or {}).items():
        for value in _choices(sub):
            if value != base.get(name):
                out.append({**base, name: value})
    return out


def result_scopes(
    contract: Any, slots: Mapping[str, Any] | None = None
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(scope, items) for each variant of a result (``_variants``), its items' variants, and
    for an empty result."""
    args = schema_sample(contract.input_schema) or {}
    key = contract.results_key
    schema = contract.output_schema if isinstance(contract.output_schema, Mapping) else {}
    item_schema = ((schema.get("properties") or {}).get(key) or {}).get("items")
    for n, result in enumerate(_variants(schema)):
        items = result.get(key)
        items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        common = {"args": args, "slots": dict(slots or {}), "result": result}
        yield {**result, **common, "found": len(items)}, items
        if n == 0 and items:
            for variant in _variants(item_schema)[1:]:
                varied = {**result, key: [variant]}
                yield {**varied, **common, "result": varied, "found": 1}, [variant]
            empty = {**result, key: []}
            yield {**empty, **common, "result": empty, "found": 0}, []
