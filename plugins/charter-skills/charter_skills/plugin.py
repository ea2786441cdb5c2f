"""The ``skills`` plugin: the reference implementations of the first-party packs' skills.

``charter_register_skills`` returns ``SKILLS``, built once at import, so every registry of a
process calls the same instances (``appointment_book``'s ledger of bookings is per instance;
tests that pin booking numbers build their own).
"""

from __future__ import annotations

from collections.abc import Sequence

from charter.extensions import Skill
from charter.hookspecs import hookimpl
from charter_skills.ecommerce import CouponCheck, LogisticsTrack, OrderLookup, ProductPrice
from charter_skills.finance import AccountBalance, PolicySearch, QuarterlyReport
from charter_skills.medical import AppointmentBook, DepartmentRecommend


def make_skills() -> tuple[Skill, ...]:
    """Fresh instances of every reference skill."""
    return (
        PolicySearch(),
        AccountBalance(),
        QuarterlyReport(),
        OrderLookup(),
        LogisticsTrack(),
        ProductPrice(),
        CouponCheck(),
        DepartmentRecommend(),
        AppointmentBook(),
    )


SKILLS: tuple[Skill, ...] = make_skills()


@hookimpl
def charter_register_skills() -> Sequence[Skill]:
    return list(SKILLS)
