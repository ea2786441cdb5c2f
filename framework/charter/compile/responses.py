"""Compile stage ``responses``: ``responses.yaml``, the ``reply:`` of skill contracts and the
``confirm:`` questions of goals.yaml become a ``ResponsesSpec``, every problem a Diagnostic
pointing into the file — inside a template too (``{balanse|amount}`` is reported at the field).

Checks beyond the schema: intents that goals.yaml does not declare (CH350),
template syntax (CH351), fields the event or the result does not have (CH352), formatters no
plugin registers (CH353), an alternative without exactly one text (CH354), an intent's confirmation
question written twice (CH355). Then every template is rendered with sample values and checked
by the pack's own rules (``charter.compile.response_check``: CH356, CH357).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from charter.compile import response_spec as R
from charter.compile.check import check_expr
from charter.compile.primitives import literals_of
from charter.compile.response_samples import statuses
from charter.compile.specs.goals import GoalsSpec
from charter.compile.specs.skills import SkillsSpec
from charter.compile.templates import Template, TemplateError, parse_template
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, did_you_mean, error
from charter.dsl import ast as A
from charter.pack.model import PackSource
from charter.pack.typed.goals import GoalsFile
from charter.pack.typed.responses import Alternative, Entry, ResponsesFile, read_entry
from charter.pack.typed.skills import SkillFile
from charter.pack.yamlsrc import LocatedDoc, Pointer


class _Stage:
    def __init__(self, source: PackSource, registry: Registry, goals: GoalsSpec | None) -> None:
        self.source = source
        self.registry = registry
        self.goals = goals
        self.constants = source.constants()
        self.diagnostics: list[Diagnostic] = []
        self.literals: set[str] = set()

    def _err(self, code: str, message: str, loc: Location, hint: str = "") -> None:
        self.diagnostics.append(error(code, message, loc, hint))

    # ---- one entry ----------------------------------------------------------------------------

    def entry(
        self,
        doc: LocatedDoc,
        ptr: Pointer,
        written: Entry,
        key: str,
        event: str,
        check_field: Callable[[tuple[str, ...], bool], str | None],
        roots: Sequence[str],
        each_allowed: bool = False,
    ) -> R.Entry | None:
        """The entry ``written`` at ``ptr`` of ``doc``; ``check_field(path, each)`` returns why
        a field is unknown, or None."""
        items: list[tuple[str | Alternative | None, Pointer]]
        if isinstance(written, tuple):
            items = [(item, (*ptr, n)) for n, item in enumerate(written)]
        else:
            items = [(written, ptr)]
        parsed: list[tuple[list[tuple[Template, Pointer]], A.Expr | None, bool, Pointer]] = []
        for item, at in items:
            found = self.alternative(doc, item, at, key, check_field, roots, each_allowed)
            if found is not None:
                parsed.append((*found, at))
        ids = R.variant_ids(key, [len(texts) for texts, _, _, _ in parsed])
        alternatives = tuple(
            R.Alternative(
                tuple((i, t) for i, (t, _) in zip(names, texts, strict=True)),
                doc.loc(at),
                when,
                each,
            )
            for names, (texts, when, each, at) in zip(ids, parsed, strict=True)
        )
        return R.Entry(key, event, alternatives)

    def alternative(
        self,
        doc: LocatedDoc,
        item: str | Alternative | None,
        at: Pointer,
        key: str,
        check_field: Callable[[tuple[str, ...], bool], str | None],
        roots: Sequence[str],
        each_allowed: bool,
    ) -> tuple[list[tuple[Template, Pointer]], A.Expr | None, bool] | None:
        if isinstance(item, str):
            t = self.template(doc, at, item, check_field, False)
            return ([(t, at)], None, False) if t is not None else None
        if item is None:
            return None  # the schema reported it
        # written, whatever the value: a text of the wrong type is still the text
        has_text, has_each = "text" in item.model_fields_set, "each" in item.model_fields_set
        if has_each and not each_allowed:
            return None  # the schema of responses.yaml reports the key
        if has_text == has_each:
            self._err(
                "CH354",
                f"an alternative of {key} needs exactly one of text and each",
                doc.loc(at),
                "text: tells the result once; each: once per result item",
            )
            return None
        field, value = ("each", item.each) if has_each else ("text", item.text)
        spots: list[tuple[Pointer, str | None]] = (
            [((*at, field, m), text) for m, text in enumerate(value)]
            if isinstance(value, tuple)
            else [((*at, field), value)]
        )
        texts = []
        for spot, text in spots:
            t = self.template(doc, spot, text, check_field, has_each)
            if t is not None:
                texts.append((t, spot))
        when = None
        if item.when is not None:
            when = check_expr(
                item.when,
                lambda span: doc.offset_loc((*at, "when"), span[0], span[1]),
                f"the condition of {key}",
                self.registry,
                self.constants,
                tuple(roots),
                self.diagnostics,
            )
            if when is None:
                return None
            self.literals |= literals_of(when)
        if len(texts) != len(spots):
            return None
        return texts, when, has_each

    def template(
        self,
        doc: LocatedDoc,
        at: Pointer,
        text: str | None,
        check_field: Callable[[tuple[str, ...], bool], str | None],
        each: bool,
    ) -> Template | None:
        """The template ``text`` at ``at``; None when there is none (the schema said so) or it
        has a problem (reported)."""
        if text is None:
            return None
        try:
            template = parse_template(text)
        except TemplateError as exc:
            self._err(
                "CH351",
                f"template syntax: {exc.message}",
                doc.offset_loc(at, exc.start, exc.end),
                exc.hint,
            )
            return None
        ok = True
        for f in template.fields:
            why = check_field(f.path, each)
            if why is not None:
                ok = False
                self._err("CH352", why, doc.offset_loc(at, f.start, f.end), _hint(why))
            for name in f.formatters:
                if name not in self.registry.formatters:
                    ok = False
                    self._err(
                        "CH353",
                        f"unknown formatter '{name}'",
                        doc.offset_loc(at, f.start, f.end),
                        did_you_mean(name, self.registry.formatters)
                        or "formatters come from plugins (charter-zh: money, amount, date…)",
                    )
        return template if ok else None


def _hint(why: str) -> str:
    return why.split(" — ", 1)[1] if " — " in why else ""


def _names(field: str, known: Iterable[str], what: str) -> str | None:
    options = sorted(set(known))
    if field in options:
        return None
    hint = did_you_mean(field, options) or "known: " + ", ".join(options)
    return f"unknown field '{field}' in {what} — {hint}"


def event_checker(
    event: str, slots: Sequence[str], key: str
) -> tuple[Callable[[tuple[str, ...], bool], str | None], tuple[str, ...]]:
    """What a template of ``event`` may name: the event's fields, the common ones, slots."""
    roots = (*R.COMMON_FIELDS, *R.EVENT_FIELDS[event], *slots)

    def check(path: tuple[str, ...], each: bool) -> str | None:
        if path[0] == "slots" and len(path) > 1:
            return _names(path[1], slots, f"{key} (slots)")
        return _names(path[0], roots, key)

    return check, tuple(dict.fromkeys(roots))


def result_checker(
    key: str, input_schema: Mapping[str, Any], output_schema: Mapping[str, Any], results_key: str
) -> tuple[Callable[[tuple[str, ...], bool], str | None], tuple[str, ...]]:
    """What a skill's reply may name: the result's top-level fields (an item's with ``each``),
    ``args.<argument>``, ``result.<field>``, ``count``, ``slots``, ``goal``, ``intent``."""
    top = _props(output_schema)
    item = _props(_items(output_schema, results_key))
    args = _props(input_schema)

    def check(path: tuple[str, ...], each: bool) -> str | None:
        root = path[0]
        if root == "args":
            return _names(path[1], args, f"{key} (args)") if len(path) > 1 else None
        if root == "result":
            return _names(path[1], top, f"{key} (result)") if len(path) > 1 else None
        if root in R.RESULT_FIELDS:
            return None
        own = item if each else top
        return _names(root, [*own, *R.RESULT_FIELDS], key + (" (each item)" if each else ""))

    return check, tuple(dict.fromkeys((*R.RESULT_FIELDS, *top, *item)))


def _props(schema: Any) -> list[str]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return list(props) if isinstance(props, Mapping) else []


def _items(schema: Mapping[str, Any], results_key: str) -> Any:
    results = (schema.get("properties") or {}).get(results_key)
    return results.get("items") if isinstance(results, Mapping) else None


def compile_responses(
    source: PackSource,
    registry: Registry,
    goals: GoalsSpec | None,
    skills: SkillsSpec | None,
) -> tuple[R.ResponsesSpec, list[Diagnostic]]:
    stage = _Stage(source, registry, goals)
    entries: list[R.Entry] = list(R.builtin_entries())
    intents = {i.id: i for i in goals.intents} if goals is not None else {}
    all_slots = sorted({s.name for i in intents.values() for s in i.slots})
    mode, modes, handoff_text = R.DEFAULT_MODE, [], R.DEFAULT_HANDOFF
    handoff_at: tuple[LocatedDoc, Pointer] | None = None
    doc = source.responses
    declared: set[str] = set()
    if doc is not None:
        written = ResponsesFile.read(doc.data)
        if written.mode is not None:
            mode = written.mode
        if written.handoff is not None:
            handoff_text, handoff_at = written.handoff, (doc, ("handoff",))
        pack_wide = written.events.written()
        for event in R.EVENTS:
            if event in pack_wide:
                key = f"pack.{event}"
                check, roots = event_checker(event, all_slots, key)
                found = stage.entry(
                    doc, ("events", event), pack_wide[event], key, event, check, roots
                )
                if found is not None:
                    entries.append(found)
        for iid, templates in written.intents.items():
            if iid not in intents:
                stage._err(
                    "CH350",
                    f"responses for unknown intent '{iid}'",
                    doc.key_loc(("intents", iid)),
                    did_you_mean(iid, intents) or "intents are declared in goals.yaml",
                )
                continue
            if templates is None:
                continue
            if templates.mode is not None:
                modes.append((iid, templates.mode))
            slots = [*(s.name for s in intents[iid].slots), *intents[iid].kept]
            if intents[iid].handoff:  # a safety intent that called a person tells its ticket
                slots.append("ticket")
            own = templates.written()
            for event in R.EVENTS:
                if event not in own:
                    continue
                key = f"{iid}.{event}"
                declared.add(key)
                check, roots = event_checker(event, slots, key)
                found = stage.entry(
                    doc, ("intents", iid, event), own[event], key, event, check, roots
                )
                if found is not None:
                    entries.append(found)
    entries += _confirms(stage, source, intents, declared)
    entries += _replies(stage, source, skills)
    handoff = _handoff(stage, handoff_text, handoff_at)
    spec = R.ResponsesSpec(
        entries=tuple(entries),
        handoff=handoff,
        mode=mode,
        modes=tuple(modes),
        statuses=statuses(skills),
        literals=tuple(sorted(stage.literals)),
    )
    return spec, stage.diagnostics


def _handoff(stage: _Stage, text: str, at: tuple[LocatedDoc, Pointer] | None) -> A.Expr:
    def locate(span: A.Span) -> Location:
        if at is None:
            return Location("<built-in>", 1, 1)
        return at[0].offset_loc(at[1], span[0], span[1])

    node = check_expr(
        text,
        locate,
        "the hand-off trigger",
        stage.registry,
        stage.constants,
        ("input",),
        stage.diagnostics,
    )
    if node is None:  # reported; the built-in trigger keeps the pack usable in the report
        from charter.dsl.parser import parse_expr

        node = parse_expr(R.DEFAULT_HANDOFF)
    stage.literals |= literals_of(node)
    return node


def _confirms(
    stage: _Stage, source: PackSource, intents: Mapping[str, Any], declared: set[str]
) -> list[R.Entry]:
    """``confirm: "<question>"`` in goals.yaml is the intent's confirmation_asked template."""
    doc = source.goals
    if doc is None:
        return []
    out = []
    for n, item in enumerate(GoalsFile.read(doc.data).intents):
        if item is None or not isinstance(item.confirm, str):
            continue  # confirm: true asks responses.yaml's (or the built-in) question
        iid = item.id
        if iid is None or iid not in intents:
            continue
        key = f"{iid}.confirmation_asked"
        if key in declared:
            stage._err(
                "CH355",
                f"intent '{iid}' has its confirmation question in goals.yaml and responses.yaml",
                doc.loc(("intents", n, "confirm")),
                "write confirm: true here and keep the question in responses.yaml",
            )
            continue
        slots = [*(s.name for s in intents[iid].slots), *intents[iid].kept]
        check, roots = event_checker("confirmation_asked", slots, key)
        found = stage.entry(
            doc, ("intents", n, "confirm"), item.confirm, key, "confirmation_asked", check, roots
        )
        if found is not None:
            out.append(found)
    return out


def _replies(stage: _Stage, source: PackSource, skills: SkillsSpec | None) -> list[R.Entry]:
    out = []
    contracts = {c.name: c for c in skills.contracts} if skills is not None else {}
    for doc in source.skills:
        written = SkillFile.read(doc.data)
        contract = contracts.get(written.name) if written.name is not None else None
        if contract is None or "reply" not in written.model_fields_set:
            continue  # without reply:, the result's summary is told as it is
        key = f"{contract.name}.{R.RESULT}"
        check, roots = result_checker(
            key, contract.input_schema, contract.output_schema, contract.results_key
        )
        found = stage.entry(
            doc,
            ("reply",),
            read_entry(written.reply),
            key,
            R.RESULT,
            check,
            roots,
            each_allowed=True,
        )
        if found is not None:
            out.append(found)
    return out
