"""Charter: deterministic rules, goals, memory and skills around a small local LLM.

The names below are the public API. Those that live in heavier modules are imported on first
use (PEP 562), so ``import charter`` stays light and the checker runtime never pulls in the
DSL parser or the YAML loader.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from charter._version import __version__
from charter.contracts.events import (
    Fallback,
    GoalTransition,
    MemoryWrite,
    Reflection,
    ReflectionAlert,
)
from charter.contracts.models import LLM, Completion, Embedder, EmbedderFactory, LLMBackend, Message
from charter.contracts.packs import PackRef
from charter.contracts.pii import PiiMatch, PiiRecognizer
from charter.contracts.registry import Registry
from charter.contracts.rules import (
    Extractor,
    Formatter,
    Item,
    Predicate,
    Repair,
    RepairArg,
    RepairInput,
)
from charter.contracts.skills import Refused, Skill, SkillContext
from charter.contracts.storage import StoreFactory
from charter.diagnostics import Diagnostic, DiagnosticError, Location, Severity
from charter.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from charter.agent import Agent, AgentOptions, Reply
    from charter.compile.api import compile_path
    from charter.compile.compiled import CompiledPack, CompiledRule
    from charter.compile.specs.learn import LearningSpec, PatchSet
    from charter.learn.log import ReflectionLog
    from charter.plugins.host import (
        PluginHost,
        default_host,
        default_registry,
        make_host,
        make_plugin_manager,
    )
    from charter.reflect.engine import CheckResult, Engine, Finding

_LAZY = {
    "Agent": "charter.agent",
    "AgentOptions": "charter.agent",
    "Reply": "charter.agent",
    "compile_path": "charter.compile.api",
    "CompiledPack": "charter.compile.compiled",
    "CompiledRule": "charter.compile.compiled",
    "default_registry": "charter.plugins.host",
    "default_host": "charter.plugins.host",
    "make_host": "charter.plugins.host",
    "make_plugin_manager": "charter.plugins.host",
    "PluginHost": "charter.plugins.host",
    "CheckResult": "charter.reflect.engine",
    "Engine": "charter.reflect.engine",
    "Finding": "charter.reflect.engine",
    "LearningSpec": "charter.compile.specs.learn",
    "PatchSet": "charter.compile.specs.learn",
    "ReflectionLog": "charter.learn.log",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'charter' has no attribute {name!r}")


__all__ = [
    "LLM",
    "Agent",
    "AgentOptions",
    "CheckResult",
    "CompiledPack",
    "CompiledRule",
    "Completion",
    "Diagnostic",
    "DiagnosticError",
    "Embedder",
    "EmbedderFactory",
    "Engine",
    "Extractor",
    "Fallback",
    "Finding",
    "Formatter",
    "GoalTransition",
    "Item",
    "LLMBackend",
    "LearningSpec",
    "Location",
    "MemoryWrite",
    "Message",
    "PackRef",
    "PatchSet",
    "PiiMatch",
    "PiiRecognizer",
    "PluginHost",
    "Predicate",
    "Reflection",
    "ReflectionAlert",
    "ReflectionLog",
    "Refused",
    "Registry",
    "Repair",
    "RepairArg",
    "RepairInput",
    "Reply",
    "Severity",
    "Skill",
    "SkillContext",
    "StoreFactory",
    "__version__",
    "compile_path",
    "default_host",
    "default_registry",
    "hookimpl",
    "make_host",
    "make_plugin_manager",
]
