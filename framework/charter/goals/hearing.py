"""The planner's steps beyond keywords (ARCHITECTURE §6a): safety intents first, the intents
the examples recognise when no trigger did, and the clarifying question those leave open.

* A safety intent (``safety: true``) whose trigger fires opens before anything else, whatever
  is pending; negation does not cancel it (the trigger's words are there). So do its examples
  for an input worded near one of them (the screen), even when an ordinary keyword fires, and
  whenever the input is embedded. An action awaiting the user's yes is dropped with it: a yes
  said after a fraud warning must not send the transfer.
* When no trigger holds and the input answers no question, the examples decide
  (``charter.compile.specs.understanding.decide``): a clear winner opens as if triggered, two
  close intents get one clarifying question (您是想A，还是B？), a middle band "您是想A吗？".
  The question is a ``clarify`` goal of the session holding the candidates and the slot values
  the input gave each; the next input resolves it: a yes (one candidate), the candidate's own
  words, 第一个/后者, or its examples (a clear lead among the candidates). A no drops it with
  its own reply; anything else drops it silently and is planned as usual.
* A question about an intent is no request of it (挂号费多少 / 跨行转账多久能到), when it gives
  the intent no number, code or date and asks nobody to do anything (``questions.asks_for``):
  a question of price, time or place that none of the intent's examples asks
  (``questions.FACTS``) is dropped at once, whether a keyword or the examples found the intent
  (``asked_about``, ``only_about``); a yes/no question on an intent customers do not ask for
  with questions (fewer than half its examples are) is embedded, and the intent dropped if one
  of its ``not_examples`` or an ``out_of_scope`` utterance is nearer than its own examples, or
  the input is below the intent's ``ask`` band: worded unlike every request of it. The FAQ or
  the unanswered reply answers.
* The examples alone never open a safety intent for an input that says it is mild (有点发热 /
  划了个小口子: ``severity.mild``), nor for a yes or a no to what is pending (不是这张卡); where
  an ordinary intent's keyword fired, the safety intent must lead it unless the input is
  severe (``screened_safety``). Its keywords open it regardless.
* Talk about the request just done is no new request of it: when the examples point at the
  session's last finished request (现在到39度了 after a symptom was triaged, 按我的风险偏好呢
  after a recommendation) and the input gives it no required value, nothing opens
  (``about_done``) and the reply is written from the conversation, as before examples.
* A yes or a no with more said after it (对，就挂这个 / 不是这个医生) while an action awaits the
  yes (``in_context``): the leading cue decides when the rest asks for nothing else (no other
  intent's trigger) and gives the awaiting goal no new value (好的，改挂皮肤科 is a correction).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import regex

from charter.compile.env import Env
from charter.compile.specs import goals as S
from charter.compile.specs.understanding import SAFETY_LEAD, Heard
from charter.goals import acts, questions, severity
from charter.goals.acts import Act
from charter.goals.plans import NewGoal, OpenGoal, Plan, SessionState
from charter.goals.tree import with_empty_parents
from charter.goals.understand import MIN_PIECE

if TYPE_CHECKING:
    from charter.goals.planner import Planner

CLARIFY_TIMEOUT_S = 10 * 60
_NOW = datetime(2026, 1, 1)  # reading a slot to see whether the text gives one: no date matters
# a slot value that makes a question a request: a number, a code, a date (券码USED30还能用吗 /
# FREESHIP能用吗); a word (退货 in 退货运费谁出, B超 or CT in B超报告要等多久) may only restate
# what the question is about
_SUBSTANTIVE = regex.compile(r"[0-9]|[A-Za-z]{4,}")
_FIRST = regex.compile(r"第一|前者|前面|前一个|上一个|头一个|^(?:1|一)[个种]?$")
_SECOND = regex.compile(r"第二|后者|后面|后一个|下一个|^(?:2|二)[个种]?$")


def safety_plan(p: Planner, intents: Sequence[str], goals: Sequence[OpenGoal]) -> Plan:
    """Open each safety intent (active: its template answers at once); drop what awaits a
    yes."""
    new = tuple(
        NewGoal(
            ref=f"n{n}",
            intent=iid,
            parent=None,
            depth=0,
            status="active",
            description=p.intents[iid].describe,
            timeout_s=p.intents[iid].timeout_s,
        )
        for n, iid in enumerate(dict.fromkeys(intents), 1)
    )
    waiting = [g.id for g in goals if g.awaiting]
    return Plan(goals=new, aborts=with_empty_parents(waiting, list(goals)), layer="safety")


def keyword_safety(p: Planner, env: Env) -> list[str]:
    return [i.id for i in p.spec.intents if i.safety and p.triggers[i.id](env)]


def screened_safety(p: Planner, env: Env, text: str, state: SessionState) -> list[str]:
    """The safety intents the examples open for an input worded near a safety example (the
    screen), whatever else it says: only such inputs are embedded before the keywords. Not
    for a mild input (``severity``); where an ordinary intent's keyword fired (发烧了怎么办),
    the safety intent must lead it by ``SAFETY_LEAD`` unless the input is severe. Nor for a
    yes, a no or a correction while a goal awaits one (不是这张卡 answers; it reports no loss).
    """
    u = p.understander
    if u is None or severity.mild(text) or not u.screens(text):
        return []
    if state.goals and _answers(p, text):
        return []
    fired = not severity.severe(text) and any(
        not i.safety and p.triggers[i.id](env) for i in p.spec.intents
    )
    return list(u.safety(text, lead=SAFETY_LEAD if fired else 0.0))


def _answers(p: Planner, text: str) -> bool:
    """``text`` is a yes, a no or a stop, alone or before a few words (不是这张卡)."""
    if acts.act_of(text, p.lexicon) is not Act.OTHER:
        return True
    lead = acts.leading(text, p.lexicon)
    return lead is not None and len(lead[1]) < MIN_PIECE


def examples_safety(heard: Heard, text: str) -> tuple[str, ...]:
    """The safety intents the examples open for an input no keyword decided: none for a mild
    one (有点发热 / 手指划了个小口子), whose degree words say it is no emergency."""
    return () if severity.mild(text) else heard.safety


def clarify_plan(p: Planner, heard: Heard, text: str, state: SessionState) -> Plan:
    """One question naming the candidates, kept as a clarify goal with what the input gave
    each candidate (its slots, read as if it had been triggered)."""
    values = {iid: p.values(p.intents[iid], text, state.now, state.preset) for iid in heard.intents}
    names = "、".join(p.intents[i].describe for i in heard.intents)
    goal = NewGoal(
        ref="n1",
        intent=S.CLARIFY_INTENT,
        parent=None,
        depth=0,
        status="pending",
        description=f"澄清：{names}",
        timeout_s=CLARIFY_TIMEOUT_S,
        slots={"candidates": list(heard.intents), "values": values},
    )
    return Plan(goals=(goal,), clarify=heard.intents, layer="example", heard=heard)


def chosen(p: Planner, env: Env, text: str, act: Act, candidates: Sequence[str]) -> str | None:
    """The candidate the answer picks, if it picks one."""
    if len(candidates) == 1 and act is Act.AFFIRM:
        return candidates[0]
    fired = [c for c in candidates if c in p.triggers and p.triggers[c](env)]
    if len(fired) == 1:
        return fired[0]
    said = [c for c in candidates if c in p.intents and p.intents[c].describe in text]
    if len(said) == 1:
        return said[0]
    # the answer gives what only one candidate asks for (您是想查询余额吗？ — 尾号1234)
    given = [c for c in candidates if c in p.intents and _telling(p, c, text)]
    if len(given) == 1:
        return given[0]
    short = text.strip()
    if len(candidates) == 2 and len(short) <= 12:
        if _FIRST.search(short) and not _SECOND.search(short):
            return candidates[0]
        if _SECOND.search(short) and not _FIRST.search(short):
            return candidates[1]
    if p.understander is not None and act is not Act.AFFIRM:
        heard = p.understander.hear(text)
        among = [s for s in heard.ranking if s.intent in candidates and s.vetoed_by is None]
        margin = p.understander.spec.margin
        if among and (len(among) == 1 or among[0].score - among[1].score >= margin):
            band = p.understander.spec.band(among[0].intent)
            if band is not None and among[0].score >= band.ask:
                return among[0].intent
    return None


def _telling(p: Planner, intent: str, text: str) -> bool:
    """The text gives a value for one of the intent's own slots (its pattern, or a specific
    extractor: a date or an amount alone is too common)."""
    spec = p.intents[intent]
    found = p.values(spec, text, _NOW, {})
    return any(
        (s := spec.slot(k)) is not None
        and (s.regex or s.extractor not in (None, "time", "money"))
        and (s.required or s.regex)
        for k in found
    )


def preset_for(
    p: Planner, state: SessionState, intent: str, values: Mapping[str, Any], text: str
) -> SessionState:
    """The state with the first input's values for ``intent``, under what the answer itself
    gives (转账，给王五 after 转800给李四 pays 王五)."""
    spec = p.intents[intent]
    now = p.values(spec, text, state.now, state.preset)
    given = dict(values.get(intent) or {}) if isinstance(values, Mapping) else {}
    return replace(state, preset={**state.preset, intent: {**given, **now}})


__all__ = [
    "chosen",
    "clarify_plan",
    "keyword_safety",
    "opens_nothing",
    "preset_for",
    "safety_plan",
]


def in_context(p: Planner, env: Env, text: str, act: Act, state: SessionState) -> Act:
    """``act``, or the act of the yes or no ``text`` starts with while an action awaits the yes
    and the rest is no new request or value (see the module docstring)."""
    awaiting = [g for g in state.goals if g.awaiting]
    if act is not Act.OTHER or not awaiting:
        return act
    lead = acts.leading(text, p.lexicon)
    if lead is None:
        return act
    said, rest = lead
    goal = awaiting[-1]
    if any(i != goal.intent and fires(env) for i, fires in p.triggers.items()):
        return act  # 好的，再帮我查个报告: another request
    intent = p.intents.get(goal.intent)
    given = p.values(intent, rest, state.now, state.preset) if intent is not None else {}
    if said is Act.AFFIRM and any(goal.slots.get(k) != v for k, v in given.items()):
        return act  # 好的，改挂皮肤科: what awaits is changed, not confirmed
    return said


@functools.lru_cache(maxsize=256)
def _asked_for_by_questions(intent: S.IntentSpec) -> bool:
    """Customers ask for the intent with questions (多少钱 / 到哪了 / 能用吗): at least half of
    its examples are questions. A question is then a request of it, never only about it."""
    return sum(acts.is_question(e) for e in intent.examples) * 2 >= len(intent.examples)


def asked_about(
    p: Planner, text: str, state: SessionState, matched: Sequence[S.IntentSpec]
) -> list[S.IntentSpec]:
    """``matched`` (the intents whose trigger fired) without those the input only asks about
    (see the module docstring); the input is embedded only for a yes/no question that gives a
    matched intent without an open goal no value."""
    if not acts.is_question(text):
        return list(matched)
    valueless = _valueless(p, text, state, matched)
    unasked = _unasked(text, valueless)  # an open request too: 挂号费多少 while it asks the day
    open_intents = {g.intent for g in state.goals}
    doubtful = [
        i
        for i in valueless
        if i.id not in unasked and i.id not in open_intents and not _asked_for_by_questions(i)
    ]
    u = p.understander
    unlike = set()
    if doubtful and u is not None:
        for s in u.hear(text).ranking:
            band = u.spec.band(s.intent)
            if s.vetoed_by is not None or (band is not None and s.score < band.ask):
                unlike.add(s.intent)
    return [i for i in matched if i.id not in unasked and (i not in doubtful or i.id not in unlike)]


def opens_nothing(p: Planner, heard: Heard, text: str, state: SessionState) -> bool:
    """What the examples point at is no new request: talk about the one just done, or a
    question only about them."""
    return about_done(p, heard, text, state) or only_about(p, heard, text, state)


def only_about(p: Planner, heard: Heard, text: str, state: SessionState) -> bool:
    """Every intent the examples point at is one ``text`` only asks about: a question of a
    kind none of its examples ask (挂号费多少 near 挂个号)."""
    if not heard.intents or not acts.is_question(text):
        return False
    intents = [p.intents[i] for i in heard.intents if i in p.intents]
    return len(intents) == len(heard.intents) and len(
        _unasked(text, _valueless(p, text, state, intents))
    ) == len(intents)


def _valueless(
    p: Planner, text: str, state: SessionState, intents: Sequence[S.IntentSpec]
) -> list[S.IntentSpec]:
    """``intents`` with examples, or actions (``confirm: true``), to which ``text`` gives no
    number, code or date."""
    return [
        i
        for i in intents
        if (any(i.examples) or i.confirm)
        and not any(
            _SUBSTANTIVE.search(str(v)) for v in p.values(i, text, state.now, state.preset).values()
        )
    ]


def _unasked(text: str, intents: Sequence[S.IntentSpec]) -> set[str]:
    """The ids of ``intents`` customers never ask for with the kind of question ``text`` asks
    about them (``_about``; none for a yes/no question or one that also asks for help)."""
    kinds = questions.kinds(text)
    if not kinds & questions.ABOUT_ACTION or questions.asks_for(text):
        return set()
    return {i.id for i in intents if (kinds & _about(i)) - _kinds_asked(i)}


def _about(intent: S.IntentSpec) -> frozenset[str]:
    """The kinds of question that ask about ``intent`` rather than for it: a fact (price, time,
    place), and for an action (``confirm: true``) how it is done too (怎么停机)."""
    return questions.ABOUT_ACTION if intent.confirm else questions.FACTS


@functools.lru_cache(maxsize=256)
def _kinds_asked(intent: S.IntentSpec) -> frozenset[str]:
    """The kinds of question (how much, when, where...) customers ask for ``intent`` with."""
    return questions.kinds_of(intent.examples)


def about_done(p: Planner, heard: Heard, text: str, state: SessionState) -> bool:
    """The examples point at the session's last finished request (the one they would open,
    or a candidate of their question) and ``text`` gives it no required slot value: the
    customer goes on about it (see the module docstring)."""
    done = state.done
    if done is None or done.intent not in heard.intents:
        return False
    intent = p.intents.get(done.intent)
    if intent is None:
        return False
    found = p.values(intent, text, state.now, state.preset)
    return not any((s := intent.slot(k)) is not None and s.required for k in found)
