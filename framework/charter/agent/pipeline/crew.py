"""What every step of a turn works with besides the turn itself: the agent's parts and options,
the drafter that asks the model, and what the reflection triggers remember between turns."""

from __future__ import annotations

from dataclasses import dataclass

from charter.agent.drafts import Drafter
from charter.agent.parts import AgentOptions, Parts
from charter.learn.triggers import History


@dataclass(frozen=True)
class Crew:
    parts: Parts
    options: AgentOptions
    drafter: Drafter
    history: History
