"""Prompt assembly by seed 003's distillation template (§4.4: 加内存不如改提示词).

Not the raw memory dumped before the question, but what a decision needs, labelled:

    【用户画像】who the user is, in a line (their profile facts)
    【当前任务】the active goals' descriptions
    【关联记忆】at most three key facts, "key：value"
    【技能结果】what the skills returned (their summaries)
    【近期对话】the newest short-term summaries
    请基于以上信息回答：{query}

Everything is counted with the model's tokenizer when it has one (``count_tokens``), else
estimated (``charter.memory.short_term.estimate_tokens``), and fitted to the pack's
``prompt.token_budget``: the oldest summaries go first, then the profile, then facts beyond
the first; the task, the skill results and the query are never dropped (each line is cut to
``MAX_LINE`` characters instead). Retry guidance — the failed rules' messages — is added as a
last section on a retry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from charter.contracts.models import Message
from charter.memory.short_term import estimate_tokens

MAX_FACTS = 3
MAX_LINE = 200
DEFAULT_INTRO = (
    "你是{name}的客服助手。只根据下面给出的信息，用简洁的中文回答用户；不知道的就说不知道。"
)


@dataclass(frozen=True)
class PromptParts:
    query: str
    profile: tuple[str, ...] = ()
    task: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    summaries: tuple[str, ...] = ()  # oldest first
    guidance: tuple[str, ...] = ()  # why the last answer was refused, on a retry


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    tokens: int
    dropped: dict[str, int] = field(default_factory=dict)  # section -> items left out

    @property
    def text(self) -> str:
        return "\n".join(m.content for m in self.messages)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"


def _body(p: PromptParts) -> str:
    lines = []
    if p.profile:
        lines.append("【用户画像】" + "；".join(p.profile))
    lines.append("【当前任务】" + ("；".join(p.task) if p.task else "回答用户的问题"))
    if p.facts:
        lines.append("【关联记忆】" + "；".join(p.facts))
    if p.skills:
        lines.append("【技能结果】" + "；".join(p.skills))
    if p.summaries:
        lines.append("【近期对话】" + "；".join(p.summaries))
    if p.guidance:
        lines.append("【修改要求】" + "；".join(p.guidance))
    lines.append(f"请基于以上信息回答：{p.query}")
    return "\n".join(lines)


def assemble(
    parts: PromptParts,
    *,
    intro: str,
    budget: int,
    count: Callable[[str], int] | None = None,
) -> Prompt:
    """The system and user messages of a turn, within ``budget`` tokens where dropping the
    optional sections can make it fit."""
    tokens = count or estimate_tokens
    p = PromptParts(
        query=" ".join(parts.query.split()),  # never cut: the question is often at the end
        profile=tuple(map(_cut, parts.profile)),
        task=tuple(map(_cut, parts.task)),
        facts=tuple(map(_cut, parts.facts))[:MAX_FACTS],
        skills=tuple(map(_cut, parts.skills)),
        summaries=tuple(map(_cut, parts.summaries)),
        guidance=tuple(map(_cut, parts.guidance)),
    )
    dropped: dict[str, int] = {}
    if len(parts.facts) > MAX_FACTS:
        dropped["facts"] = len(parts.facts) - MAX_FACTS

    def size(q: PromptParts) -> int:
        return tokens(intro) + tokens(_body(q))

    while size(p) > budget:
        if p.summaries:
            p = _without(p, "summaries", p.summaries[1:], dropped)
        elif p.profile:
            p = _without(p, "profile", (), dropped, len(p.profile))
        elif len(p.facts) > 1:
            p = _without(p, "facts", p.facts[:-1], dropped)
        else:
            break  # what is left is what the turn needs; the budget is exceeded, and said so
    body = _body(p)
    messages = (Message("system", intro), Message("user", body))
    return Prompt(messages, size(p), dropped)


def _without(
    p: PromptParts, name: str, kept: Sequence[str], dropped: dict[str, int], n: int = 1
) -> PromptParts:
    dropped[name] = dropped.get(name, 0) + n
    values = {f: getattr(p, f) for f in p.__dataclass_fields__}
    values[name] = tuple(kept)
    return PromptParts(**values)
