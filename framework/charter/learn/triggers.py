"""The five reflection triggers of seed 001 §3.1, evaluated after each turn.

Reflection is failure-driven: a turn where none of these signals is seen writes nothing.

* ``skill_failure`` — the same skill failed (error, timeout, breaker open) ``skill_failures``
  times in a row for this user (2 by default);
* ``negation`` — the user rejects the previous answer (不对 / 错了 / 重新来 …) instead of going
  on from it: a question about it (对不对？ 是不是错了？) or an approval (没错, 不错) is not a
  rejection, and there must have been an answer to reject in this session;
* ``entropy`` — the mean token entropy of the model's accepted answer is above the pack's
  threshold (3.2 nats by default): from the backend's full-vocabulary entropies when it gives
  them (llama.cpp), else estimated as the mean surprisal −log p of the chosen tokens;
* ``contradiction`` — a skill was called for a goal holding a slot value the user did not give
  in this turn (the model read it, or it was inherited) that differs from the fact of the same
  name the user confirmed within the last ``contradiction_turns`` turns (3);
* ``rejection`` — an external validation refused a skill's result (its output contract, or the
  skill asked for reflection: an empty result whose text claims success).

Each trigger that fires gives one ``Reflection``: the seed's hypothesis, at most three typed
pieces of evidence with their timestamps, and the correction when the turn shows it (a negation
followed by the same skill called with other arguments: the changed arguments; 不是A，是B between
two concepts of ``learning.yaml``: ``{"concept": B, "instead_of": A}``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.compile.specs.learn import LearningSpec
from charter.learn.log import Evidence
from charter.learn.words import is_negation

FAILED = ("error", "timeout", "breaker_open")
REJECTED = ("contract_violation",)
# the negation word is part of a question about the answer or of an approval: the user goes on
_GOES_ON = re.compile(r"没错|不错|对不对|错没错|是不是错|错了吗|不对吗|对吗|有没有错")


@dataclass(frozen=True)
class CallSeen:
    skill: str
    args: Mapping[str, Any]
    status: str  # ok, invalid, failed
    failure: str | None = None
    detail: str = ""
    reflect: bool = False  # the runner asked for reflection (an empty result claiming success)
    text: str = ""
    intent: str | None = None
    slots: Mapping[str, Any] = field(default_factory=dict)  # the goal's slots the call used
    user_given: frozenset[str] = frozenset()  # slots the user gave in this turn
    # slot -> the fact key its value is remembered under (transfer.amount); unlisted: the name
    fact_keys: Mapping[str, str] = field(default_factory=dict)

    def evidence(self, at: datetime) -> Evidence:
        result: dict[str, Any] = {"status": self.status, "text": self.text}
        if self.failure is not None:
            result["failure"] = self.failure
        return Evidence("tool_call", at, name=self.skill, params=dict(self.args), result=result)


@dataclass(frozen=True)
class TurnSeen:
    text: str
    at: datetime
    calls: tuple[CallSeen, ...] = ()
    hypothesis: str = ""  # what the agent took the user to need (the active goals)
    intent: str | None = None
    answered: bool = True  # the agent gave an answer the user can reject


@dataclass(frozen=True)
class Reflection:
    trigger: str
    hypothesis: str
    evidence: tuple[Evidence, ...]
    correction: Mapping[str, Any] | None = None
    intent: str | None = None
    skill: str | None = None


@dataclass
class History:
    """What the triggers remember between turns, per process: the previous turn of each
    session and each user's failure streak per skill. A user's turns must reach one process
    (``charter serve`` with several workers: route a user to one worker, as for the per-user
    turn lock). Shared by every user's turns: one lock guards it."""

    last: dict[tuple[str, str], TurnSeen] = field(default_factory=dict)
    streaks: dict[tuple[str, str], list[tuple[datetime, CallSeen]]] = field(default_factory=dict)
    limit: int = 10_000
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def previous(self, user_id: str, session_id: str) -> TurnSeen | None:
        with self._lock:
            return self.last.get((user_id, session_id))

    def remember(self, user_id: str, session_id: str, turn: TurnSeen) -> None:
        key = (user_id, session_id)
        with self._lock:
            self.last.pop(key, None)
            self.last[key] = turn
            while len(self.last) > self.limit:
                self.last.pop(next(iter(self.last)))

    def streak(self, user_id: str, call: CallSeen, at: datetime) -> list[tuple[datetime, CallSeen]]:
        """The user's consecutive failed calls of the skill (one per turn), this one
        included; a call that did not fail ends the streak."""
        key = (user_id, call.skill)
        with self._lock:
            if call.status != "failed" or call.failure not in FAILED:
                self.streaks.pop(key, None)
                return []
            run = self.streaks.setdefault(key, [])
            run.append((at, call))
            del run[:-10]
            return list(run)

    def reset(self, user_id: str, skill: str) -> None:
        """A reflection was written for the streak: the next one starts from zero."""
        with self._lock:
            self.streaks.pop((user_id, skill), None)

    def forget(self, user_id: str) -> None:
        with self._lock:
            for key in [k for k in self.last if k[0] == user_id]:
                del self.last[key]
            for skey in [k for k in self.streaks if k[0] == user_id]:
                del self.streaks[skey]


def is_rejection(text: str) -> bool:
    """The user says the previous answer was wrong, rather than asking whether it was."""
    t = text.strip()
    if not is_negation(t):
        return False
    return not _GOES_ON.search(t)


def mean_entropy(completion: Any) -> float | None:
    """Nats per token: the backend's own measure when it has one (llama.cpp's ``mean_entropy``
    over the full vocabulary), else the mean surprisal of the chosen tokens' logprobs."""
    own = getattr(completion, "mean_entropy", None)
    if isinstance(own, int | float):
        return float(own)
    logprobs: tuple[float, ...] = tuple(getattr(completion, "logprobs", ()))
    if not logprobs:
        return None
    return -sum(logprobs) / len(logprobs)


ConfirmedFact = Callable[[str], tuple[Any, datetime] | None]  # key -> (value, confirmed at)


@dataclass(frozen=True)
class Signals:
    """This turn as the triggers see it."""

    turn: TurnSeen
    entropy: float | None = None
    confirmed: ConfirmedFact | None = None  # the user's confirmed fact for a key, if any
    # how many turns back (this one is 1) a fact confirmed at that time was; None: not in
    # this session's recent turns at all
    turns_back: Callable[[datetime], int | None] | None = None


def evaluate(
    spec: LearningSpec,
    history: History,
    user_id: str,
    session_id: str,
    signals: Signals,
) -> list[Reflection]:
    """The reflections this turn calls for, in the order of the module docstring; records the
    turn for the next one."""
    t = spec.triggers
    turn = signals.turn
    now = turn.at
    out: list[Reflection] = []
    # one call per skill and turn: two goals calling a failing skill in one turn are one failure
    firsts = {c.skill: c for c in reversed(turn.calls)}
    for call in (c for c in turn.calls if firsts.get(c.skill) is c):
        run = history.streak(user_id, call, now)
        if t.skill_failures <= 0 or len(run) < t.skill_failures:
            continue
        history.reset(user_id, call.skill)  # an outage gives one entry per N failures
        kinds = "、".join(dict.fromkeys(c.failure or "" for _, c in run))
        out.append(
            Reflection(
                "skill_failure",
                f"技能{call.skill}连续{len(run)}次调用失败（{kinds}），应改用兜底或检查服务",
                (
                    Evidence("user_input", now, turn.text),
                    *(c.evidence(at) for at, c in run[-2:]),
                ),
                None,
                call.intent,
                call.skill,
            )
        )
    previous = history.previous(user_id, session_id)
    if t.negation and previous is not None and previous.answered and is_rejection(turn.text):
        out.append(_negation(spec, previous, turn))
    if t.entropy is not None and signals.entropy is not None and signals.entropy > t.entropy:
        out.append(
            Reflection(
                "entropy",
                f"模型对“{turn.hypothesis or turn.text}”的回答没有把握"
                f"（平均熵{signals.entropy:.2f} > {t.entropy:g}）",
                (
                    Evidence("user_input", now, turn.text),
                    *(c.evidence(now) for c in turn.calls[:1]),
                ),
                None,
                turn.intent,
            )
        )
    if t.contradiction_turns > 0 and signals.confirmed is not None:
        out.extend(_contradictions(turn, signals, t.contradiction_turns))
    if t.rejection:
        for call in turn.calls:
            if call.failure in REJECTED or call.reflect:
                why = call.detail or call.failure or "结果与声明不符"
                out.append(
                    Reflection(
                        "rejection",
                        f"技能{call.skill}的结果未通过校验：{why}",
                        (Evidence("user_input", now, turn.text), call.evidence(now)),
                        None,
                        call.intent,
                        call.skill,
                    )
                )
    history.remember(user_id, session_id, turn)
    return out


def _negation(spec: LearningSpec, previous: TurnSeen, turn: TurnSeen) -> Reflection:
    now = turn.at
    feedback = Evidence("user_feedback", now, turn.text)
    asked = Evidence("user_input", previous.at, previous.text)
    for before in previous.calls:
        again = next((c for c in turn.calls if c.skill == before.skill), None)
        if again is None:
            continue
        changed = {k: v for k, v in again.args.items() if before.args.get(k) != v}
        if changed:
            return Reflection(
                "negation",
                f"用户需要{turn.hypothesis}" if turn.hypothesis else turn.text,
                (asked, before.evidence(previous.at), feedback),
                changed,
                again.intent or previous.intent,
                before.skill,
            )
    pair = concept_correction(spec, turn.text)
    correction = {"concept": pair[1], "instead_of": pair[0]} if pair else None
    evidence = (asked, *(c.evidence(previous.at) for c in previous.calls[:1]), feedback)
    hypothesis = (
        f"用户问的是{pair[1]}，不是{pair[0]}"
        if pair
        else (
            f"用户需要{previous.hypothesis}"
            if previous.hypothesis
            else f"用户不认可对“{previous.text}”的回答"
        )
    )
    skill = previous.calls[0].skill if previous.calls else None
    return Reflection("negation", hypothesis, evidence, correction, previous.intent, skill)


def concept_correction(spec: LearningSpec, text: str) -> tuple[str, str] | None:
    """(taken, meant) when the feedback sets two concepts of ``learning.yaml`` apart:
    不是A，是B / 是B，不是A / 我问的是B不是A."""
    names = sorted((n for n, _ in spec.concepts), key=len, reverse=True)
    if len(names) < 2:
        return None
    term = "|".join(re.escape(n) for n in names)
    wrong = re.search(rf"不是(?P<a>{term})[，,、\s]*(?:而)?(?:是|要|问的是)(?P<b>{term})", text)
    if wrong is None:
        wrong = re.search(
            rf"(?:是|要|问)(?:的是)?(?P<b>{term})[，,、\s]*(?:而)?不是(?P<a>{term})", text
        )
    if wrong is None or wrong["a"] == wrong["b"]:
        return None
    return wrong["a"], wrong["b"]


def _contradictions(turn: TurnSeen, signals: Signals, window: int) -> list[Reflection]:
    assert signals.confirmed is not None
    out = []
    for call in turn.calls:
        for key, value in call.slots.items():
            if key in call.user_given:
                continue  # the user said it now: a change of mind, not a contradiction
            held = signals.confirmed(call.fact_keys.get(key, key))
            if held is None:
                continue
            held_value, at = held
            back = signals.turns_back(at) if signals.turns_back is not None else None
            if back is None or back > window:
                continue
            if _same(held_value, value):
                continue
            out.append(
                Reflection(
                    "contradiction",
                    f"{key}应为用户已确认的{held_value}，本轮却用了{value}",
                    (Evidence("user_input", turn.at, turn.text), call.evidence(turn.at)),
                    {key: held_value},
                    call.intent,
                    call.skill,
                )
            )
    return out


def _same(a: Any, b: Any) -> bool:
    return _norm(a) == _norm(b)


def _norm(value: Any) -> str:
    text = "、".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return re.sub(r"\s+|元$|\.0+$", "", text)


__all__ = [
    "CallSeen",
    "History",
    "Reflection",
    "Signals",
    "TurnSeen",
    "evaluate",
    "is_rejection",
    "mean_entropy",
]
