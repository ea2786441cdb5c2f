"""The ``skills`` plugin: the reference implementations of the first-party packs' skills.

``charter_register_skills`` returns ``SKILLS``, built once at import, so every registry of a
process calls the same instances (``appointment_book``'s ledger of bookings and the number
counters of the executing skills ``transfer``, ``invoice_issue`` and ``return_request`` are per
instance; tests that pin those numbers build their own).
"""

from __future__ import annotations

from collections.abc import Sequence

from charter.contracts.skills import Skill
from charter.plugins.hookspecs import hookimpl
from charter_skills.compliance import ComplianceCheck
from charter_skills.ecommerce import (
    CouponCheck,
    LogisticsTrack,
    OrderLookup,
    ProductPrice,
    ReturnRequest,
)
from charter_skills.finance import AccountBalance, PolicySearch, QuarterlyReport
from charter_skills.invoices import InvoiceIssue
from charter_skills.medical import AppointmentBook, DepartmentRecommend
from charter_skills.payments import Transfer


def make_skills() -> tuple[Skill, ...]:
    """Fresh instances of every reference skill."""
    return (
        PolicySearch(),
        AccountBalance(),
        QuarterlyReport(),
        Transfer(),
        ComplianceCheck(),
        InvoiceIssue(),
        OrderLookup(),
        LogisticsTrack(),
        ProductPrice(),
        CouponCheck(),
        ReturnRequest(),
        DepartmentRecommend(),
        AppointmentBook(),
    )


SKILLS: tuple[Skill, ...] = make_skills()


@hookimpl
def charter_register_skills() -> Sequence[Skill]:
    return list(SKILLS)
