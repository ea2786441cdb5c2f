"""The ablation of seed 001 §5.4 (``charter health --ablation CASES``): the scripted cases of
``charter.health.ablation_cases`` played (``charter.health.ablation_play``) in five
configurations — ``base`` (no memory, no reflection, no skills: goals still plan), ``memory``,
``reflection`` or ``skills`` alone, and ``all`` — switched by ``AgentOptions(memory=,
reflection=, skills=)``, always with ``mode="assisted"``: the ablation measures the components
around a model that may answer (templates tell what they cover, the model answers the rest),
where a strict pack would never let it speak. Each configuration of a file gets a fresh SQLite
database; the clock (``NOW``) and the model are scripted, so the success matrix is the same on
every run. The results and their synergy coefficient (CC) are
``charter.health.ablation_results``'s; ``charter.health.ablation_render`` shows them.
"""

from __future__ import annotations

import base64
import shutil
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from charter.agent import Agent
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.health.ablation_cases import AblationError, CaseFile, load_case_files
from charter.health.ablation_play import Outcome, TurnModel, play
from charter.health.ablation_results import (
    CONFIGURATIONS,
    NAMES,
    NOW,
    AblationReport,
    CaseResult,
    Configuration,
)
from charter.reflect.engine import Engine

# a throwaway key for the temporary databases (the packs encrypt some memory levels)
_KEY = base64.b64encode(b"charter-ablation-throwaway-key!!").decode()


def _quiet(hook: str, event: object) -> None:
    """Plugins hear nothing of an ablation run."""


def run_ablation(
    paths: Sequence[Path],
    *,
    registry: Registry,
    database_dir: Path | None = None,
    now: datetime = NOW,
) -> AblationReport:
    """Play every case of the case files under ``paths`` (files, or directories of
    ``*.yaml``) in the five configurations. AblationError when a case file or its pack is
    not right. The databases go to ``database_dir`` when given (kept: one per file and
    configuration, replaced when there), else to a temporary directory removed after."""
    files = load_case_files(paths, registry.packs)
    packs = [_compile(f, registry) for f in files]
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="charter-ablation-") as tmp:
        where = database_dir if database_dir is not None else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        empty = Path(tmp) / "empty.db"  # every store's tables, no rows: copied, not migrated
        if packs:
            empty.touch()
            _agent(packs[0], empty, registry, CONFIGURATIONS[0], TurnModel(), now).close()
        for index, (cases, pack) in enumerate(zip(files, packs, strict=True), 1):
            outcomes: dict[str, list[Outcome]] = {}
            engine = Engine(pack, registry)
            for config in CONFIGURATIONS:
                db = where / f"ablation-{index:02d}-{pack.name}-{config.name}.db"
                shutil.copyfile(empty, db)
                outcomes[config.name] = _play(cases, pack, engine, config, db, registry, now)
            for i, case in enumerate(cases.cases):
                results.append(
                    CaseResult(
                        pack.name,
                        cases.path,
                        case.line,
                        case.name,
                        case.needs,
                        {n: outcomes[n][i] for n in NAMES},
                    )
                )
    return AblationReport(tuple(results), now)


def _compile(file: CaseFile, registry: Registry) -> CompiledPack:
    from charter.compile.api import compile_path

    compiled, diags = compile_path(file.pack_root, registry)
    if compiled is None:
        raise AblationError([d for d in diags if d.is_error])
    return compiled


def _agent(
    pack: CompiledPack,
    db: Path,
    registry: Registry,
    config: Configuration,
    model: TurnModel,
    now: datetime,
) -> Agent:
    return Agent.from_pack(
        pack,
        llm=model,
        database_url=f"sqlite:///{db}",
        memory_key=_KEY,
        registry=registry,
        clock=lambda: now,
        notify=_quiet,
        options=config.options(),
    )


def _play(
    file: CaseFile,
    pack: CompiledPack,
    engine: Engine,
    config: Configuration,
    db: Path,
    registry: Registry,
    now: datetime,
) -> list[Outcome]:
    model = TurnModel()
    with _agent(pack, db, registry, config, model, now) as agent:
        cases = enumerate(file.cases, 1)
        return [play(agent, model, engine, case, f"case-{n:02d}") for n, case in cases]
