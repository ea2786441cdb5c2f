"""Every hook Charter calls, typed and documented (the model is pytest's ``hookspec.py``).

Built-in behaviour registers through these same hooks (``charter.plugins.builtin``); third-party
plugins register through the entry-point group ``charter``. A plugin implements a hook by defining
a function of the same name decorated with ``charter.hookimpl``; it may accept fewer parameters
than the spec (pluggy passes only those it names), which is how later versions can add parameters
without breaking plugins.

Two phases:

* **Registration** hooks are called once per plugin host, when its registry is built (before any
  pack is compiled). Each returns a sequence of objects; every object has a ``name`` unique
  across all plugins. None is ``firstresult`` or ``historic``: every plugin's implementation is
  called, in registration order (built-ins first, then entry points). An exception (CH204), a
  wrong type (CH203) or a name already taken (CH202) is a Diagnostic naming the plugin.
* **Lifecycle** hooks are called by the runtime while turns run, with one frozen event from
  ``charter.contracts.events``. They return nothing; what they return is ignored. They are
  observers: a plugin cannot change the turn from here. An exception is a CH204 Diagnostic: under
  the ``fail`` policy it is raised (as ``DiagnosticError``) once every other plugin has been
  called; under ``disable`` the plugin is switched off and the problem reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from charter.contracts.events import (
    Fallback,
    GoalTransition,
    MemoryWrite,
    Reflection,
    ReflectionAlert,
)

# re-exported: plugins import ``hookimpl`` from here
from charter.contracts.markers import PROJECT as PROJECT
from charter.contracts.markers import hookimpl as hookimpl
from charter.contracts.markers import hookspec as hookspec
from charter.contracts.models import EmbedderFactory, LLMBackend
from charter.contracts.packs import PackRef
from charter.contracts.pii import PiiRecognizer
from charter.contracts.rules import Extractor, Formatter, Predicate, Repair
from charter.contracts.skills import Skill
from charter.contracts.storage import StoreFactory

# ---- registration: called once, when the plugin host builds its registry ---------------------


@hookspec
def charter_register_extractors() -> Sequence[Extractor]:
    """Return extractors for the rule DSL.

    Each extractor's ``name`` is the word rules use (``every money in output ...``). Must be
    pure: the same text gives the same items, with no I/O. Return the same instances on every
    call (build regexes and lexicons once, at import).
    """


@hookspec
def charter_register_predicates() -> Sequence[Predicate]:
    """Return predicates usable in the DSL as ``name(subject, args...)``.

    ``params`` lists the kinds of the arguments after the subject (checked at compile time). A
    predicate must be pure and total: it returns a bool for every text and never raises.
    """


@hookspec
def charter_register_repairs() -> Sequence[Repair]:
    """Return repairs usable as ``on_fail: fix <name> <args>``.

    ``check_args`` is called at compile time, ``apply`` when a rule fails. The built-in
    ``append``, ``prepend``, ``replace``, ``reformat`` and ``annotate`` come through this hook too.
    """


@hookspec
def charter_register_formatters() -> Sequence[Formatter]:
    """Return formatters for response templates, used as ``{value|name}``.

    ``format(value)`` writes a JSON or slot value into a reply (``amount``: ``¥12,345.60
    （壹万贰仟叁佰肆拾伍元陆角）``) or returns None when it cannot, and then the template
    variant that uses it is not chosen. Templates name their formatters, and are checked at
    compile time. A formatter must be pure and never raise. The built-in ``join`` and ``count``
    come through this hook too.
    """


@hookspec
def charter_register_skills() -> Sequence[Skill]:
    """Return skill implementations, each under the name of its contract (``skills/*.yaml``).

    A pack's skill contract without an installed implementation is a warning in ``charter
    validate`` (an error with ``--strict``).
    """


@hookspec
def charter_register_packs() -> Sequence[PackRef | Path | str]:
    """Return the packs shipped inside the plugin's distribution.

    Either ``PackRef(name, path)`` or a directory path (``Path`` or ``str``), whose ``pack.yaml``
    gives the name. Relative paths are taken from the plugin module's directory. Such packs are
    addressable by name (``charter check --domain acme-insurance``) and by ``extends:``, and
    ``charter validate --all-installed`` validates them.
    """


@hookspec
def charter_register_llm_backends() -> Sequence[LLMBackend]:
    """Return LLM backend factories (``llamacpp``, ``openai``, ``scripted`` ...).

    Registration must not load a model: ``create(options)`` does, when the configuration picks
    the backend by name.
    """


@hookspec
def charter_register_embedders() -> Sequence[EmbedderFactory]:
    """Return embedder factories for the narrative memory channel; ``create(options)`` loads the
    model."""


@hookspec
def charter_register_stores() -> Sequence[StoreFactory]:
    """Return storage backends, each for one ``kind`` of
    ``charter.contracts.storage.STORE_KINDS``.

    The name must be unique per kind only in spirit: it is unique across all plugins, so prefer
    ``"<engine>-<kind>"`` (``"postgresql-facts"``).
    """


@hookspec
def charter_register_pii_recognizers() -> Sequence[PiiRecognizer]:
    """Return PII recognizers, used by the memory write pipeline to redact or generalise
    personal data before anything is stored (ID number → ``[ID]``, address → district)."""


# ---- lifecycle: called by the runtime while turns run --------------------------------------


@hookspec
def charter_on_goal_transition(event: GoalTransition) -> None:
    """After a goal changed status, once per transition that happened (a compare-and-set that
    lost the race calls nothing). Called after the transaction committed."""


@hookspec
def charter_on_memory_write(event: MemoryWrite) -> None:
    """After a memory was written, superseded, expired or forgotten, once per row, after the
    transaction committed. ``event.value`` is already redacted."""


@hookspec
def charter_after_reflection(event: Reflection) -> None:
    """After every checked answer (each attempt of a turn), with its verdict and reflection
    record."""


@hookspec
def charter_on_fallback(event: Fallback) -> None:
    """When a fallback protocol runs an action, before the action's own effects are returned."""


@hookspec
def charter_on_reflection_alert(event: ReflectionAlert) -> None:
    """When the model's self-reflection said Y where the rules said N three times in a row."""


REGISTRATION_HOOKS: tuple[str, ...] = (
    "charter_register_extractors",
    "charter_register_predicates",
    "charter_register_repairs",
    "charter_register_formatters",
    "charter_register_skills",
    "charter_register_packs",
    "charter_register_llm_backends",
    "charter_register_embedders",
    "charter_register_stores",
    "charter_register_pii_recognizers",
)
LIFECYCLE_HOOKS: tuple[str, ...] = (
    "charter_on_goal_transition",
    "charter_on_memory_write",
    "charter_after_reflection",
    "charter_on_fallback",
    "charter_on_reflection_alert",
)
