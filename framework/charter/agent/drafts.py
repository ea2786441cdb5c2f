"""The model's drafts (``assisted`` and ``rephrase`` modes, ARCHITECTURE §5a): an open event
answered by the model, each draft judged by the model-text checks, the rules and the goal's
deliverables and retried with their guidance; or the whole composed reply reworded, kept only
when nothing it stated was lost. The loop (``charter.agent.loop``) decides when to ask."""

from __future__ import annotations

from typing import TYPE_CHECKING

from charter.agent import rephrase, steps
from charter.agent.parts import AgentOptions, Parts
from charter.agent.selfcheck import SelfReflection
from charter.compose.composer import MODEL, Part
from charter.compose.events import Event
from charter.learn.triggers import mean_entropy

if TYPE_CHECKING:
    from charter.agent.turn import Turn


class Drafter:
    def __init__(
        self,
        parts: Parts,
        options: AgentOptions,
        max_retries: int,
        selfcheck: SelfReflection | None,
    ) -> None:
        self.p = parts
        self.options = options
        self.max_retries = max_retries
        self.selfcheck = selfcheck

    def draft(self, turn: Turn, n: int, event: Event) -> None:
        """The model answers open event ``n`` (assisted): each draft checked by the model-text
        checks, the rules and the goal's deliverables, retried with their guidance; accepted,
        it takes the event's place in ``turn.drafts``; refused to the end, the plain reply
        does."""
        p, rec, drafts, text = self.p, turn.rec, turn.drafts, turn.text
        planned, recalled, called, ctx = turn.planned, turn.memory, turn.called, turn.call_context
        composed, patched = turn.told, turn.patched
        guidance: tuple[str, ...] = ()
        told = [pt.text for pt in composed.parts]
        attempt = 0
        while True:
            attempt += 1
            drafts.attempts += 1
            with rec.step("prompt", {"attempt": attempt}) as s:
                prompt = steps.prompt(
                    p, text, planned, recalled, called, guidance, ctx, patched.notes
                )
                s.outputs.update(tokens=prompt.tokens, dropped=prompt.dropped, text=prompt.text)
            with rec.step("generate", {"attempt": attempt}) as s:
                done = p.llm.generate(
                    list(prompt.messages),
                    max_tokens=self.options.max_tokens,
                    temperature=self.options.temperature,
                )
                entropy = mean_entropy(done)
                s.outputs.update(text=done.text, tokens=done.tokens, timings=dict(done.timings))
                if entropy is not None:
                    s.outputs["entropy"] = round(entropy, 4)
                    drafts.entropy = entropy
            if not self.options.reflection:
                # the ablation's "no reflection": the model's text as it is
                drafts.parts[n] = Part(event, MODEL, done.text)
                return
            with rec.step("reflect", {"attempt": attempt}) as s:
                judged = steps.reflect(
                    p,
                    text,
                    done.text,
                    planned,
                    recalled,
                    called,
                    prompt=[m.content for m in prompt.messages],
                    told=told,
                    goal=event.goal,
                )
                s.outputs.update(judged.trace())
                s.decision = judged.decision(attempt, self.max_retries)
            if self.selfcheck is not None:
                with rec.step("self_reflect", {"attempt": attempt}) as s:
                    goal = "；".join(g.description for g in planned.active)
                    record = judged.record(attempt)
                    own = self.selfcheck.check(
                        goal, judged.checked.final_text, record, rec.id, ctx.user_id, ctx.session_id
                    )
                    s.outputs.update(own.as_dict())
                    s.decision = "disagrees with the rules" if own.disagrees(record) else "agrees"
            if judged.accept:
                if judged.verdict == "block":
                    drafts.blocked = True
                    drafts.findings += judged.findings
                    return
                drafts.parts[n] = Part(event, MODEL, judged.checked.final_text)
                # the model's text completes a goal only by meeting the deliverables its
                # intent declares (checked above), never by free text alone
                if event.goal is not None and judged.alignment.aligned and self._deliverable(event):
                    drafts.goals.add(event.goal)
                return
            if judged.verdict == "retry" and attempt <= self.max_retries:
                guidance = judged.guidance
                continue
            drafts.findings += judged.findings
            if judged.verdict == "escalate":
                drafts.escalate = "escalate: " + "、".join(judged.checked.failed)
            return

    def _deliverable(self, event: Event) -> bool:
        spec = self.p.pack.goals
        intent = spec.intent(event.intent) if spec is not None and event.intent else None
        return intent is not None and bool(intent.deliverables)

    def rephrase(self, turn: Turn) -> str | None:
        """The model rewords the composed reply; kept only when it passes every check and
        keeps each amount, date, identifier and status of the composed text."""
        p, rec, text, composed = self.p, turn.rec, turn.text, turn.told
        planned, recalled, called = turn.planned, turn.memory, turn.called
        messages = rephrase.request(composed.text)
        with rec.step("generate", {"attempt": 1, "rephrase": True}) as s:
            done = p.llm.generate(
                messages, max_tokens=self.options.max_tokens, temperature=self.options.temperature
            )
            s.outputs.update(text=done.text, tokens=done.tokens)
        with rec.step("reflect", {"attempt": 1, "rephrase": True}) as s:
            judged = steps.reflect(
                p,
                text,
                done.text,
                planned,
                recalled,
                called,
                prompt=[m.content for m in messages],
                told=[composed.text],
            )
            lost = rephrase.lost(p, composed.text, judged.checked.final_text)
            s.outputs.update(judged.trace())
            s.outputs["lost"] = lost
            ok = judged.verdict in ("pass", "fixed") and not lost
            s.decision = "rephrasing kept" if ok else "the composed reply is sent"
        return judged.checked.final_text if ok else None
