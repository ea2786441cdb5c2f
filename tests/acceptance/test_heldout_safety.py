"""The safety intents on phrases written apart from the packs (tests/fixtures/heldout, by a
helper that never read them): every emergency, fraud or product-safety report in plain words
opens a safety intent, and ordinary talk rarely does. This measures what the packs' own intent
tables cannot, since those were written beside the examples.

The counts come from the bundled embedder's similarities against fitted bands, so a phrase
within float noise of a band may fall the other way on another CPU: each bound allows one such
phrase beyond what this machine gives (medical: 1 false alarm of 40, 39 of 40 emergencies;
finance: 2 of 30, 25 of 25; ecommerce: 1 of 30, 20 of 20)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from charter.agent.parts import understander_for
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.goals.planner import Planner, SessionState

# a sweep: 185 phrases embedded and planned, 3-4 s a pack on the CI machine
pytestmark = pytest.mark.slow

HELDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "heldout"

# pack -> (most false alarms among the ordinary phrases, fewest safety phrases recognised)
BOUNDS = {"medical": (2, 38), "finance": (3, 24), "ecommerce": (2, 19)}


def _safety_opened(planner: Planner, text: str) -> bool:
    plan = planner.plan(text, SessionState())
    return plan.layer == "safety"


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_safety_intents_on_phrases_written_apart_from_the_pack(
    name: str, shipped_packs: Mapping[str, CompiledPack], registry: Registry
) -> None:
    pack = shipped_packs[name]
    assert pack.goals is not None
    planner = Planner(pack.goals, registry, pack.constants, understander_for(pack, registry, None))
    table = yaml.safe_load((HELDOUT / f"{name}.yaml").read_text(encoding="utf-8"))
    alarms = [t for t in table["ordinary"] if _safety_opened(planner, t)]
    missed = [t for t in table["safety"] if not _safety_opened(planner, t)]
    most_alarms, fewest_found = BOUNDS[name]
    found = len(table["safety"]) - len(missed)
    assert (len(alarms) <= most_alarms, found >= fewest_found) == (True, True), (
        f"false alarms {len(alarms)}/{len(table['ordinary'])}: {alarms}; "
        f"missed {len(missed)}/{len(table['safety'])}: {missed}"
    )
