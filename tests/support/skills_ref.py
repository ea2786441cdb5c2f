"""The shipped packs' skill contracts run against the reference implementations of
``charter-skills``."""

from __future__ import annotations

from dataclasses import replace

from charter.contracts.registry import Registry
from charter.plugins.host import default_registry
from charter.skills.runner import SkillRunner
from charter.skills.tickets import TicketStore
from charter_skills.plugin import make_skills
from tests.support.packs import shipped


def fresh_registry() -> Registry:
    """The installed plugins with new skill instances, so that appointment_book's ledger
    starts from the capacity table in every test."""
    reg, diags = default_registry()
    assert not diags, diags
    return replace(reg, skills={s.name: s for s in make_skills()})


def make_runner(pack_name: str, tickets: TicketStore | None) -> SkillRunner:
    pack = shipped(pack_name)
    assert pack.skills is not None
    return SkillRunner(
        pack.skills,
        fresh_registry(),
        pack=pack.name,
        constants=pack.constants,
        tickets=tickets,
    )
