"""Compile stage ``intent_tests``: a pack's intent test table (``tests/intents.yaml``) into one
frozen ``IntentPhrase`` per phrase (``charter.compile.specs.phrases``), which ``charter test``
measures understanding on. What cannot be measured is reported where it is written:

* CH385 (warning): a phrase names an intent the pack's goals.yaml does not declare (an
  intent still to be written, or a typo), as expected or as pending (``of``): the phrase is
  left out of the measurement;
* CH386 (error): a phrase's ``act`` is no dialogue act;
* CH387 (error): a phrase expects an ``act`` with nothing ``pending``, or expects nothing, or
  names in ``of`` an intent that is never in its ``pending`` state (no confirmation, no
  required slot), or gives ``of`` without ``pending``;
* CH388 (warning): a phrase is one of the pack's own examples (``examples``, ``not_examples``,
  ``out_of_scope``): the table measures what the examples do not say, so it must be held out;
* CH389 (error): ``slots`` name a slot the expected intent does not have, or come without an
  intent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from charter.compile.specs.phrases import ACTS, NONE, IntentPhrase
from charter.diagnostics import Diagnostic, did_you_mean, error, warning

if TYPE_CHECKING:
    from charter.compile.specs.goals import GoalsSpec, IntentSpec
    from charter.pack.yamlsrc import LocatedDoc


def compile_phrases(
    doc: LocatedDoc, goals: GoalsSpec | None
) -> tuple[tuple[IntentPhrase, ...], list[Diagnostic]]:
    from charter.pack.typed.intents import IntentsFile

    written = IntentsFile.read(doc.data)
    intents = {i.id: i for i in goals.intents} if goals is not None else {}
    examples = _examples(goals)
    out: list[IntentPhrase] = []
    diags: list[Diagnostic] = []
    for n, phrase in enumerate(written.phrases):
        if phrase is None or phrase.say is None:
            continue  # the schema reported it
        at = ("phrases", n)
        bad = False
        intent = phrase.intent
        if intent is not None and intent != NONE and intent not in intents:
            bad = True
            where = "the pack has no goals.yaml" if goals is None else "goals.yaml declares none"
            diags.append(
                warning(
                    "CH385",
                    f"phrase '{phrase.say}' expects unknown intent '{intent}' ({where}): "
                    "it is not measured",
                    doc.loc((*at, "intent")),
                    did_you_mean(intent, [*intents, NONE]),
                )
            )
        if phrase.act is not None and phrase.act not in ACTS:
            bad = True
            diags.append(
                error(
                    "CH386",
                    f"phrase '{phrase.say}' expects unknown dialogue act '{phrase.act}'",
                    doc.loc((*at, "act")),
                    did_you_mean(phrase.act, ACTS),
                )
            )
        if phrase.act is not None and phrase.pending is None:
            bad = True
            diags.append(
                error(
                    "CH387",
                    f"phrase '{phrase.say}' expects the act '{phrase.act}' with nothing pending",
                    doc.loc((*at, "act")),
                    "an act answers something: add pending: confirm or pending: question",
                )
            )
        elif phrase.act is None and intent is None:
            bad = True
            diags.append(
                error(
                    "CH387",
                    f"phrase '{phrase.say}' expects neither an intent nor an act",
                    doc.loc(at),
                    "add intent: <id> (or intent: none), or pending: and act:",
                )
            )
        bad |= _pending_of(doc, at, phrase.say, phrase.pending, phrase.of, intents, diags)
        bad |= _slots(doc, at, phrase.say, intent, phrase.slots, intents, diags)
        if phrase.say.strip() in examples:
            diags.append(
                warning(
                    "CH388",
                    f"phrase '{phrase.say}' is one of the pack's {examples[phrase.say.strip()]}: "
                    "the table must be held out",
                    doc.loc((*at, "say")),
                    "write the phrase in other words, or take it out of goals.yaml",
                )
            )
        if bad:
            continue
        out.append(
            IntentPhrase(
                say=phrase.say,
                intent=None if intent in (None, NONE) else intent,
                act=phrase.act,
                pending=phrase.pending,
                slots_json=json.dumps(phrase.slots, ensure_ascii=False, sort_keys=True),
                location=doc.loc(at),
                checks_intent=intent is not None,
                of=phrase.of,
            )
        )
    return tuple(out), diags


def _pending_of(
    doc: LocatedDoc,
    at: tuple[str, int],
    say: str,
    pending: str | None,
    of: str | None,
    intents: dict[str, IntentSpec],
    diags: list[Diagnostic],
) -> bool:
    """CH385 for an ``of`` naming no intent, CH387 for one without ``pending`` or whose intent
    cannot be in that state; True when any."""
    if of is None:
        return False
    where = doc.loc((*at, "of"))
    spec = intents.get(of)
    if spec is None:
        diags.append(
            warning(
                "CH385",
                f"phrase '{say}' is said while unknown intent '{of}' is pending: "
                "it is not measured",
                where,
                did_you_mean(of, list(intents)),
            )
        )
        return True
    problem = None
    if pending is None:
        problem = "with nothing pending", "add pending: confirm or pending: question"
    elif pending == "confirm" and not spec.confirm:
        problem = "awaiting a yes it never asks", f"give '{of}' confirm: true, or name another"
    elif pending == "question" and not any(s.required for s in spec.slots):
        problem = "asking a question it never asks", f"'{of}' has no required slot"
    if problem is None:
        return False
    diags.append(
        error("CH387", f"phrase '{say}' is said with '{of}' {problem[0]}", where, problem[1])
    )
    return True


def _slots(
    doc: LocatedDoc,
    at: tuple[str, int],
    say: str,
    intent: str | None,
    slots: dict[str, str],
    intents: dict[str, IntentSpec],
    diags: list[Diagnostic],
) -> bool:
    """CH389 for each expected slot the expected intent does not have; True when any."""
    if not slots:
        return False
    spec = intents.get(intent) if intent is not None else None
    if spec is None:
        if intent is not None and intent != NONE:
            return False  # CH385 said it
        diags.append(
            error(
                "CH389",
                f"phrase '{say}' expects slots but no intent",
                doc.loc((*at, "slots")),
                "slots are read by the intent the phrase opens: add intent: <id>",
            )
        )
        return True
    names = [s.name for s in spec.slots]
    bad = False
    for slot in slots:
        if slot not in names:
            bad = True
            diags.append(
                error(
                    "CH389",
                    f"phrase '{say}' expects slot '{slot}', which intent '{intent}' does not have",
                    doc.key_loc((*at, "slots", slot)),
                    did_you_mean(slot, names),
                )
            )
    return bad


def _examples(goals: GoalsSpec | None) -> dict[str, str]:
    """Each utterance of the pack's examples, with what it is."""
    if goals is None:
        return {}
    out = {t.strip(): "out_of_scope examples" for t in goals.out_of_scope}
    for intent in goals.intents:
        out.update({t.strip(): f"not_examples of '{intent.id}'" for t in intent.not_examples})
        out.update({t.strip(): f"examples of '{intent.id}'" for t in intent.examples})
    return out
