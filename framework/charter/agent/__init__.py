"""The agent runtime: ``Agent.from_pack(...).turn(user_id, session_id, text) -> Reply``."""

from charter.agent.loop import Agent
from charter.agent.parts import AgentOptions
from charter.agent.reply import ReflectionRecord, Reply

__all__ = ["Agent", "AgentOptions", "ReflectionRecord", "Reply"]
