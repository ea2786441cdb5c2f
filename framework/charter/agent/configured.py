"""An agent from the runtime configuration (``charter.toml``, the environment): what
``charter chat``, ``charter demo`` and ``charter serve`` start from.

The model comes from the registered backend the configuration names, with the options that
backend takes: ``llamacpp`` the GGUF path (empty: the bundled Gemma) and the context size;
``openai`` the server's URL and key; ``scripted`` the answers given to this function (tests
and drills). The memory key comes from the variable the configuration names; a pack that
encrypts memory and finds no key refuses to start (never plaintext).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from charter.agent.loop import Agent
from charter.agent.parts import AgentOptions
from charter.config import Config
from charter.config.specs import every_seconds
from charter.contracts.models import LLM
from charter.contracts.registry import Registry
from charter.memory.narrative.upkeep import UpkeepSettings
from charter.memory.shared import SharedSettings
from charter.store.clock import Clock, utcnow


def backend_options(config: Config) -> dict[str, Any]:
    m = config.model
    if m.backend == "llamacpp":
        return {"model_path": m.path or None, "n_ctx": m.n_ctx}
    if m.backend == "openai":
        options: dict[str, Any] = {"base_url": m.base_url}
        if m.api_key is not None:
            options["api_key"] = m.api_key.reveal()
        return options
    return {}


def make_llm(config: Config, registry: Registry, extra: Mapping[str, Any] | None = None) -> LLM:
    """The configured backend's LLM: its settings from ``[model]``, then ``[model.options]``,
    then ``extra``, each passed to the backend as they are."""
    backend = registry.llm_backends.get(config.model.backend)
    if backend is None:
        names = ", ".join(sorted(registry.llm_backends)) or "none"
        raise ValueError(
            f"no installed plugin registers the model backend {config.model.backend!r} "
            f"(installed: {names})"
        )
    options = {**backend_options(config), **dict(config.model.options), **dict(extra or {})}
    return backend.create(options)


def agent_options(config: Config) -> AgentOptions:
    """The ``AgentOptions`` of ``[agent]``, ``[model]`` and ``[memory]``: retries, generation,
    tracing, self-reflection, the composition mode (empty: each pack's own), the shared
    pool (``shared_url`` empty: none) and the narrative store's compaction and batched uses."""
    # the check refuses 'off' for this bound; a Config built in code may still hold it
    flush_after = every_seconds(config.memory.usage_flush_after)
    return AgentOptions(
        max_retries=config.agent.max_retries,
        max_tokens=config.model.max_tokens,
        temperature=config.model.temperature,
        trace=config.agent.trace,
        self_reflection=config.agent.self_reflection,
        mode=config.agent.mode or None,
        shared=SharedSettings.from_config(
            config.memory.shared_url, config.memory.shared_namespace, config.memory.shared_keys
        ),
        upkeep=UpkeepSettings(
            compact_every=config.memory.compact_every,
            usage_batch=config.memory.usage_batch,
            usage_flush_after_s=UpkeepSettings.usage_flush_after_s
            if flush_after is None
            else flush_after,
        ),
    )


def agent_from_config(
    config: Config,
    *,
    domain: str | None = None,
    llm: LLM | None = None,
    registry: Registry | None = None,
    environ: Mapping[str, str] | None = None,
    narrative: bool = True,
    clock: Clock | None = None,
) -> Agent:
    from charter.plugins.host import default_host

    env = os.environ if environ is None else environ
    reg = registry or default_host().registry
    model = llm if llm is not None else make_llm(config, reg)
    key = config.memory.key.reveal() if config.memory.key is not None else None
    return Agent.from_pack(
        domain or config.agent.domain,
        llm=model,
        database_url=config.database.url,
        narrative_path=config.memory.narrative_path if narrative else None,
        memory_key=key,
        registry=reg,
        environ=env,
        options=agent_options(config),
        clock=clock or utcnow,
    )
