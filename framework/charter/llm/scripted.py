"""The ``scripted`` backend: replays given answers, for tests and ablation runs.

Options (an unknown or ill-typed option is a ``ValueError``):

* ``answers``: a list, answered in order, each exactly once; or
* ``script``: a mapping of regular expressions to answers. Patterns are tried in order with
  ``re.search`` against the last user message (``""`` when there is none); the first that
  matches answers. A list of answers is answered in order, each exactly once; a single answer
  is given every time its pattern matches.
* ``default``: one answer, given every time ``answers`` are used up or no pattern matches.

``answers`` and ``script`` exclude each other. An answer is a string or a mapping ``{text,
logprobs, tokens}``: ``logprobs`` (one float per token) are passed through to
``Completion.logprobs``, so entropy-based reflection triggers can be tested. ``tokens`` is the
given ``tokens``, else the number of ``logprobs``, else the number of characters of the text
(code points: Chinese has no spaces to split on); the same answer always counts the same.

A call with nothing to answer raises ``LLMError`` saying why (answers used up, no pattern
matches, a pattern's answers used up) and quoting the last user message. The answer is returned
as given: ``max_tokens`` and ``stop`` are recorded, not applied.

``grammar`` is recorded; one shape is also checked: a grammar that is a single ``root`` rule
whose alternatives are all string literals (``root ::= "是" | "否"``; ``#`` comment lines
allowed) accepts exactly those strings, and an answer that is none of them raises
``LLMBadResponse``. Any other grammar is recorded only.

Every call is recorded (``calls``), also one that raises. A lock makes choosing and recording
one step, so threads sharing the backend each get a different answer.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charter.contracts.models import Completion, Message
from charter.llm.errors import LLMBadResponse, LLMError, check_option_names

_OPTIONS = ("answers", "script", "default")
_ANSWER_KEYS = ("text", "logprobs", "tokens")


def _bad(message: str) -> ValueError:
    return ValueError(f"scripted backend: {message}")


@dataclass(frozen=True)
class Answer:
    text: str
    logprobs: tuple[float, ...] = ()
    tokens: int | None = None

    def completion(self) -> Completion:
        tokens = self.tokens
        if tokens is None:
            tokens = len(self.logprobs) if self.logprobs else len(self.text)
        return Completion(text=self.text, tokens=tokens, logprobs=self.logprobs)


def _answer(value: Any, where: str) -> Answer:
    if isinstance(value, Answer):
        return value
    if isinstance(value, str):
        return Answer(value)
    if not isinstance(value, Mapping):
        raise _bad(f"{where} must be a string or a mapping, not {value!r}")
    unknown = [k for k in value if k not in _ANSWER_KEYS]
    if unknown:
        raise _bad(f"{where} has unknown key {unknown[0]!r}; expected text, logprobs, tokens")
    text = value.get("text")
    if not isinstance(text, str):
        raise _bad(f"{where}.text must be a string, not {text!r}")
    logprobs = value.get("logprobs", ())
    if not isinstance(logprobs, Sequence) or isinstance(logprobs, str):
        raise _bad(f"{where}.logprobs must be a list of numbers, not {logprobs!r}")
    for lp in logprobs:
        if isinstance(lp, bool) or not isinstance(lp, int | float):
            raise _bad(f"{where}.logprobs must be a list of numbers, not {logprobs!r}")
    tokens = value.get("tokens")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0
    ):
        raise _bad(f"{where}.tokens must be an integer >= 0, not {tokens!r}")
    return Answer(text, tuple(float(lp) for lp in logprobs), tokens)


# ---- the grammar subset that is checked -----------------------------------------------------

_LITERAL = r'"(?:[^"\\]|\\.)*"'
_ALTERNATIVES = re.compile(rf"\s*root\s*::=\s*({_LITERAL}(?:\s*\|\s*{_LITERAL})*)\s*", re.S)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def _unescape(m: re.Match[str]) -> str:
    code = m[1]
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _SIMPLE_ESCAPES.get(code, code)  # \" \\ \[ \] and the like stand for themselves


def literal_alternatives(grammar: str) -> tuple[str, ...] | None:
    """The strings a ``root ::= "a" | "b"`` grammar accepts; None for any other grammar."""
    lines = [ln for ln in grammar.splitlines() if not ln.strip().startswith("#")]
    m = _ALTERNATIVES.fullmatch("\n".join(lines))
    if m is None:
        return None
    return tuple(_ESCAPE.sub(_unescape, lit[1:-1]) for lit in re.findall(_LITERAL, m[1]))


# ---- the backend ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedCall:
    """One ``generate`` call, as made."""

    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float
    stop: tuple[str, ...]
    grammar: str | None


@dataclass
class _Entry:
    pattern: re.Pattern[str]
    answers: list[Answer]
    repeat: bool  # a single answer, given at every match
    given: int = 0


def _last_user(messages: Sequence[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


class ScriptedLLM:
    """An ``LLM`` answering from a list or a script (see the module docstring)."""

    def __init__(
        self,
        answers: Sequence[Any] | None = None,
        *,
        script: Mapping[str, Any] | None = None,
        default: Any = None,
    ) -> None:
        if answers is not None and script is not None:
            raise _bad("give either answers or script, not both")
        if answers is None and script is None and default is None:
            raise _bad("give answers, script or default")
        if answers is not None and (isinstance(answers, str) or not isinstance(answers, Sequence)):
            raise _bad(f"answers must be a list, not {answers!r}")
        if script is not None and not isinstance(script, Mapping):
            raise _bad(f"script must map regular expressions to answers, not {script!r}")
        self._queue = [_answer(a, f"answers[{i}]") for i, a in enumerate(answers or ())]
        self._given = 0
        self._entries = [self._entry(p, v) for p, v in (script or {}).items()]
        self._scripted = script is not None
        self._default = None if default is None else _answer(default, "default")
        self._calls: list[ScriptedCall] = []
        self._lock = threading.Lock()

    @staticmethod
    def _entry(pattern: Any, value: Any) -> _Entry:
        if not isinstance(pattern, str):
            raise _bad(f"script keys must be regular expressions, not {pattern!r}")
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            raise _bad(f"script pattern {pattern!r} is not a regular expression: {e}") from None
        where = f"script[{pattern!r}]"
        if isinstance(value, Sequence) and not isinstance(value, str):
            return _Entry(
                compiled, [_answer(v, f"{where}[{i}]") for i, v in enumerate(value)], False
            )
        return _Entry(compiled, [_answer(value, where)], True)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ScriptedLLM:
        check_option_names("scripted", options, _OPTIONS)
        return cls(
            options.get("answers"), script=options.get("script"), default=options.get("default")
        )

    @property
    def calls(self) -> tuple[ScriptedCall, ...]:
        with self._lock:
            return tuple(self._calls)

    @property
    def remaining(self) -> int:
        """Answers not yet given that are given once (a list's); repeating ones not counted."""
        with self._lock:
            left = len(self._queue) - self._given
            return left + sum(len(e.answers) - e.given for e in self._entries if not e.repeat)

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> Completion:
        call = ScriptedCall(tuple(messages), max_tokens, temperature, tuple(stop), grammar)
        with self._lock:
            self._calls.append(call)
            answer = self._choose(len(self._calls), _last_user(messages))
        if grammar is not None:
            accepted = literal_alternatives(grammar)
            if accepted is not None and answer.text not in accepted:
                raise LLMBadResponse(
                    f"scripted backend: answer {answer.text!r} does not match the grammar, "
                    f"which accepts only {', '.join(repr(a) for a in accepted)}"
                )
        return answer.completion()

    def _choose(self, n: int, last: str) -> Answer:
        """The answer for call ``n``; the caller holds the lock."""
        if not self._scripted:
            if self._given < len(self._queue):
                self._given += 1
                return self._queue[self._given - 1]
            why = f"all {len(self._queue)} answers were used"
        else:
            entry = next((e for e in self._entries if e.pattern.search(last)), None)
            if entry is not None:
                if entry.repeat:
                    return entry.answers[0]
                if entry.given < len(entry.answers):
                    entry.given += 1
                    return entry.answers[entry.given - 1]
                raise LLMError(
                    f"scripted backend: call {n} has no answer: the {len(entry.answers)} answers "
                    f"of script pattern {entry.pattern.pattern!r} were all used "
                    f"(last user message: {last!r})"
                )
            why = "no script pattern matches"
        if self._default is not None:
            return self._default
        raise LLMError(
            f"scripted backend: call {n} has no answer: {why} (last user message: {last!r})"
        )


def create(options: Mapping[str, Any]) -> ScriptedLLM:
    """What the ``scripted`` backend's ``create`` returns."""
    return ScriptedLLM.from_options(options)
