"""Charter: deterministic rules, goals, memory and skills around a small local LLM.

The names below are the public API. Those that live in heavier modules are imported on first
use (PEP 562), so ``import charter`` stays light and the checker runtime never pulls in the
DSL parser or the YAML loader.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from charter._version import __version__
from charter.diagnostics import Diagnostic, DiagnosticError, Location, Severity
from charter.events import Fallback, GoalTransition, MemoryWrite, Reflection, ReflectionAlert
from charter.extensions import (
    LLM,
    Completion,
    Embedder,
    EmbedderFactory,
    LLMBackend,
    Message,
    PackRef,
    PiiMatch,
    PiiRecognizer,
    Skill,
    StoreFactory,
)
from charter.hookspecs import hookimpl
from charter.protocols import (
    Extractor,
    Formatter,
    Item,
    Predicate,
    Repair,
    RepairArg,
    RepairInput,
)
from charter.registry import Registry

if TYPE_CHECKING:
    from charter.agent import Agent, AgentOptions, Reply
    from charter.compile.api import compile_path
    from charter.compile.compiled import CompiledPack, CompiledRule
    from charter.learn.log import ReflectionLog
    from charter.learn.spec import LearningSpec, PatchSet
    from charter.plugins import (
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
    "default_registry": "charter.plugins",
    "default_host": "charter.plugins",
    "make_host": "charter.plugins",
    "make_plugin_manager": "charter.plugins",
    "PluginHost": "charter.plugins",
    "CheckResult": "charter.reflect.engine",
    "Engine": "charter.reflect.engine",
    "Finding": "charter.reflect.engine",
    "LearningSpec": "charter.learn.spec",
    "PatchSet": "charter.learn.spec",
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
    "Registry",
    "Repair",
    "RepairArg",
    "RepairInput",
    "Reply",
    "Severity",
    "Skill",
    "StoreFactory",
    "__version__",
    "compile_path",
    "default_host",
    "default_registry",
    "hookimpl",
    "make_host",
    "make_plugin_manager",
]
