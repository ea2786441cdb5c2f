"""A compiled ``responses.yaml`` (and the ``reply:`` of skill contracts): immutable, picklable.

Templates are keyed by goal events. An event is told by the first *entry* found for it: the
intent's own (``transfer.slot_corrected``), the pack's (``pack.cancelled``), then Charter's
built-in Chinese default (``builtin.cancelled``); a skill's successful result by its contract's
(``account_balance.result``). An entry is an ordered list of alternatives: the first whose
``when`` holds and whose fields all have values is used; an alternative written as a list of
texts rotates among them deterministically (turn by turn).

Template ids, as ``Reply.responses`` reports them and conversation tests name them: the entry's
key, plus ``#n`` (the alternative, from 1) when the entry has several, plus ``.m`` (the text of
a rotation, from 1): ``transfer.slot_corrected#2``, ``pack.cancelled#1.2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from charter.compile.templates import Template, parse_template
from charter.diagnostics import Location
from charter.dsl import ast as A

if TYPE_CHECKING:
    from charter.compile.specs.skills import SkillsSpec

MODES = ("strict", "assisted", "rephrase")
DEFAULT_MODE = "strict"

# every goal event with the fields its templates may use besides the goal's slots and the
# fields every event has (goal: the goal's description, intent: what the intent is called)
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    # refused: what personal data the input gave where the slot's regex looked (银行卡号), passed
    # over so that it reaches no goal (goals.md, slots: personal)
    "slot_asked": ("slot", "label", "question", "refused"),
    "slot_corrected": ("slot", "label", "old", "new"),
    # a value the input did not give, taken from the session's goals or the user's memory
    "slot_carried": ("slot", "label", "value", "source"),
    "cancelled": (),
    # a yes again after an action was done: it is not done twice
    "already_done": (),
    "confirmation_asked": ("goals", "count"),
    "confirmation_accepted": ("goals", "count"),
    "confirmation_declined": ("goals", "count"),
    "completed": (),
    "skill_failed": ("skill", "failure"),
    "handed_off": ("ticket", "reason", "message"),
    "resumed": ("question",),
    "unanswered": ("abilities", "members"),
    # the examples left two intents close (first, second) or one in the middle band (first):
    # one question before anything is done (ARCHITECTURE §6a); and the no that answers it
    "clarification_asked": ("first", "second", "count"),
    "clarification_declined": (),
}
EVENTS = tuple(EVENT_FIELDS)
COMMON_FIELDS = ("goal", "intent", "slots")
# a skill result's templates read the result's fields (an item's, with ``each``) and these
RESULT_FIELDS = ("args", "found", "slots", "goal", "intent", "result")
RESULT = "result"
# turns that are told without a template of responses.yaml: a fallback protocol's own text, a
# contract's message for refused arguments, an FAQ answer
FALLBACK, INVALID, FAQ = "fallback", "invalid", "faq"
EVENT_KINDS = (*EVENTS, RESULT, FALLBACK, INVALID, FAQ)
MODEL = "model"  # the id of a reply's part the model wrote
SAFE = "safe"  # the id of the pack's safe message (messages.safe), sent when a rule blocks

DEFAULT_HANDOFF = 'input contains any ["转人工", "人工客服", "找人工", "人工服务", "真人客服"]'

# Charter's own wording, used when neither the intent nor the pack says otherwise. Checked
# against each pack's rules like the pack's own templates (a pack whose rules refuse one of
# these gets a diagnostic naming the event to write).
BUILTIN: dict[str, tuple[str, ...]] = {
    "slot_asked": (
        "为保护您的信息安全，{refused}不会用作{label}。{question}",
        "{question}",
        "请告诉我{label}。",
    ),
    "slot_corrected": (
        "好的，已将{label}从{old}改为{new}。",
        "好的，已将{label}改为{new}。",
        "好的，已更新为{new}。",
    ),
    # neutral about where the value came from (the user's words, or a result told earlier):
    # a pack words the two sources itself, with when: source == "memory"
    "slot_carried": ("沿用{label}：{value}。", "沿用{value}。"),
    "cancelled": ("好的，已取消{goal}。", "好的，有需要随时找我。"),
    "confirmation_asked": (
        "检测到您可能需要同时处理{count}件事：{goals}，是否继续？（是/否）",
        "请确认：{goal}？（是/否）",
    ),
    "confirmation_accepted": ("好的，已确认。",),
    "already_done": ("{intent}已经办理过了，不会重复办理。",),
    # one request declined names it; the requests of a split (no {goal}) are spoken of together
    "confirmation_declined": ("好的，已取消{goal}。", "好的，这些事项都不办理了。"),
    "completed": (),
    "skill_failed": ("抱歉，{intent}暂时无法办理，请稍后再试，或说“转人工”由人工客服处理。",),
    "handed_off": ("{message}（工单号 {ticket}）",),
    "resumed": ("我们继续刚才的{intent}：{question}", "我们继续刚才的{intent}。"),
    "unanswered": (
        "您一次提到了好几件事，{members}请分开告诉我，我逐一为您办理。",
        "抱歉，这个问题我暂时无法回答。我可以帮您办理{abilities}；如需人工服务，请说“转人工”。",
        "抱歉，这个问题我暂时无法回答；如需人工服务，请说“转人工”。",
    ),
    "clarification_asked": ("请问您是想办理{first}，还是{second}？", "请问您是想办理{first}吗？"),
    "clarification_declined": ("好的。请再具体说说您想办理什么；如需人工服务，请说“转人工”。",),
}


@dataclass(frozen=True)
class Alternative:
    """One alternative of an entry: its text(s) — several rotate —, when it applies, and
    whether it is told once per result item (``each``, skill results only)."""

    texts: tuple[tuple[str, Template], ...]  # (template id, template)
    location: Location | None = None
    when: A.Expr | None = None
    each: bool = False


@dataclass(frozen=True)
class Entry:
    key: str  # "transfer.slot_corrected", "pack.cancelled", "builtin.cancelled", "x.result"
    event: str
    alternatives: tuple[Alternative, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(i for a in self.alternatives for i, _ in a.texts)


@dataclass(frozen=True)
class ResponsesSpec:
    entries: tuple[Entry, ...]
    handoff: A.Expr | None = None  # None: nothing the user says asks for a person
    mode: str = DEFAULT_MODE
    modes: tuple[tuple[str, str], ...] = ()  # intent -> its own mode
    # words that state a status (enum values of the contracts' output schemas): a model answer
    # may only state one a result or the user stated (grounding)
    statuses: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()  # of every ``when`` and the handoff trigger
    # the template ids a turn of this pack can use (the intents' events that can happen, the
    # entries that answer them): what conversation coverage counts
    reachable: tuple[str, ...] = ()
    _by_key: dict[str, Entry] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_key.update({e.key: e for e in self.entries})

    def entry(self, event: str, intent: str | None = None) -> Entry | None:
        """The entry that tells ``event`` of a goal of ``intent``: the intent's, the pack's,
        else the built-in one."""
        chain = self.chain(event, intent)
        return chain[0] if chain else None

    def chain(self, event: str, intent: str | None = None) -> tuple[Entry, ...]:
        """The intent's entry for ``event``, the pack's, the built-in one (those that exist):
        when none of an entry's alternatives can be told (a field it needs has no value), the
        next one is tried."""
        keys = (f"{intent}.{event}" if intent else None, f"pack.{event}", f"builtin.{event}")
        return tuple(
            self._by_key[k]
            for k in keys
            if k is not None and self._by_key.get(k) and self._by_key[k].alternatives
        )

    def result(self, skill: str) -> Entry | None:
        return self._by_key.get(f"{skill}.{RESULT}")

    def mode_of(self, intent: str | None) -> str:
        return dict(self.modes).get(intent or "", self.mode)

    def template_ids(self) -> frozenset[str]:
        return frozenset(i for e in self.entries for i in e.ids)


def reply_ids(skills: SkillsSpec | None) -> frozenset[str]:
    """The ids ``Reply.responses`` gives the texts that are no template of responses.yaml:
    what the model wrote, a contract's summary told as it is, a contract's message for refused
    arguments, a fallback protocol's own text, an FAQ answer."""
    from charter.compile.specs.skills import ACTION_KINDS

    ids = {MODEL, SAFE, FAQ, FALLBACK, INVALID}
    for c in skills.contracts if skills is not None else ():
        ids |= {f"{c.name}.summary", f"{c.name}.{INVALID}"}
        ids |= {f"{c.name}.{FALLBACK}.{action}" for action in ACTION_KINDS}
    faq = skills.faq if skills is not None else None
    ids |= {f"{FAQ}.{e.id}" for e in faq.entries} if faq is not None else set()
    return frozenset(ids)


def variant_ids(key: str, sizes: list[int]) -> list[list[str]]:
    """The ids of an entry's texts, given how many texts each alternative has: ``key`` for a
    lone text, ``key#n`` for alternative n, ``key#n.m`` for text m of a rotation."""
    numbered = len(sizes) > 1 or any(size > 1 for size in sizes)
    out = []
    for n, size in enumerate(sizes, 1):
        base = f"{key}#{n}" if numbered else key
        out.append([base] if size == 1 else [f"{base}.{m}" for m in range(1, size + 1)])
    return out


def builtin_entries() -> tuple[Entry, ...]:
    """Charter's default wording as entries (their templates are known to parse)."""
    entries = []
    for event, texts in BUILTIN.items():
        key = f"builtin.{event}"
        ids = variant_ids(key, [1] * len(texts))
        entries.append(
            Entry(
                key,
                event,
                tuple(
                    Alternative(((i[0], parse_template(t)),))
                    for i, t in zip(ids, texts, strict=True)
                ),
            )
        )
    return tuple(entries)


def default_spec() -> ResponsesSpec:
    """Charter's own wording only, for a compiled pack that has no responses spec."""
    return ResponsesSpec(builtin_entries())
