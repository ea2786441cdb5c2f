"""Optional self-reflection by the model (ARCHITECTURE §5): after the checkers have judged an
answer, the model is asked the same three questions — 【目标对齐】【约束合规】【不确定性】 — under
a GBNF grammar, so it can only answer in that shape.

The deterministic record stays the decision; the model's answer is compared with it. A model
that says Y where the checkers said N is disagreeing in the dangerous direction (it would
have let the answer through); three such turns in a row of one user fire
``charter_on_reflection_alert`` (a prompt or model change to look at). Answers are cached by
(user, goal, output): the same answer to the same task is not judged twice, and what is cached
of a user goes when the user is forgotten.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from charter.agent.reply import ReflectionRecord
from charter.contracts.events import ReflectionAlert
from charter.contracts.models import LLM, Message

GRAMMAR = r"""root ::= "【目标对齐】" yn "\n【约束合规】" yn "\n【不确定性】" level
yn ::= "Y" | "N"
level ::= "高" | "低"
"""
_ANSWER = re.compile(r"【目标对齐】([YN])\s*【约束合规】([YN])\s*【不确定性】([高低])")
ALERT_AFTER = 3
CACHE_SIZE = 512
PROMPT = (
    "检查下面这个回答。任务：{goal}\n回答：{output}\n"
    "按格式回答三行：【目标对齐】Y或N（是否完成了任务）、【约束合规】Y或N（是否遵守规定）、"
    "【不确定性】高或低。"
)


@dataclass(frozen=True)
class SelfCheck:
    goal_aligned: bool | None
    constraints_ok: bool | None
    uncertain: bool | None
    raw: str
    cached: bool = False

    @property
    def parsed(self) -> bool:
        return self.goal_aligned is not None

    def disagrees(self, record: ReflectionRecord) -> bool:
        """The model passed what the checkers failed."""
        return self.parsed and (
            (bool(self.goal_aligned) and not record.goal_aligned)
            or (bool(self.constraints_ok) and not record.constraints_ok)
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "goal_aligned": self.goal_aligned,
            "constraints_ok": self.constraints_ok,
            "uncertain": self.uncertain,
            "raw": self.raw,
            "cached": self.cached,
        }


def parse(text: str) -> SelfCheck:
    m = _ANSWER.search(text)
    if m is None:
        return SelfCheck(None, None, None, text)
    return SelfCheck(m[1] == "Y", m[2] == "Y", m[3] == "高", text)


class SelfReflection:
    """One per agent: the cache and the run of disagreements are the agent's."""

    def __init__(
        self,
        llm: LLM,
        *,
        pack: str,
        notify: Callable[[str, object], object] | None = None,
        max_tokens: int = 32,
    ) -> None:
        self.llm = llm
        self.pack = pack
        self.notify = notify
        self.max_tokens = max_tokens
        self._cache: OrderedDict[tuple[str, str, str], SelfCheck] = OrderedDict()
        self._runs: dict[str, list[str]] = {}  # user -> trace ids of disagreements in a row
        self._lock = threading.Lock()

    def check(
        self,
        goal: str,
        output: str,
        record: ReflectionRecord,
        trace_id: str,
        user: str,
        session: str,
    ) -> SelfCheck:
        key = (user, goal, output)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is not None:
            result = SelfCheck(hit.goal_aligned, hit.constraints_ok, hit.uncertain, hit.raw, True)
        else:
            try:
                done = self.llm.generate(
                    [Message("user", PROMPT.format(goal=goal or "回答用户的问题", output=output))],
                    max_tokens=self.max_tokens,
                    temperature=0.0,
                    grammar=GRAMMAR,
                )
            except Exception as exc:  # optional: a backend without grammars must not fail turns
                return SelfCheck(None, None, None, f"unavailable: {type(exc).__name__}: {exc}")
            result = parse(done.text)
            with self._lock:
                self._cache[key] = result
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        self._count(result, record, trace_id, user, session)
        return result

    def forget(self, user: str) -> None:
        """Drop what is cached of the user (their answers' texts) and their run."""
        with self._lock:
            for key in [k for k in self._cache if k[0] == user]:
                del self._cache[key]
            self._runs.pop(user, None)

    def _count(
        self, result: SelfCheck, record: ReflectionRecord, trace_id: str, user: str, session: str
    ) -> None:
        with self._lock:
            if not result.disagrees(record):
                self._runs.pop(user, None)
                return
            ids = self._runs.setdefault(user, [])
            ids.append(trace_id)
            run = list(ids)
            if len(run) >= ALERT_AFTER:
                del self._runs[user]
        if len(run) >= ALERT_AFTER and self.notify is not None:
            self.notify(
                "charter_on_reflection_alert",
                ReflectionAlert(
                    pack=self.pack,
                    reason=f"the model passed {len(run)} answers in a row that the rules failed",
                    consecutive=len(run),
                    trace_ids=tuple(run),
                    user_id=user,
                    session_id=session,
                ),
            )
