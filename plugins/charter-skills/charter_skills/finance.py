"""Finance reference skills: ``policy_search`` (seed 001 §4's example), ``account_balance`` and
``quarterly_report``.

They answer from packaged demo data (``data/policies.json``, ``accounts.json``,
``reports.json``). The contract in ``domains/finance/skills`` has already checked the arguments
when they are called through Charter; a direct call with bad arguments raises, as any failing
skill does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charter.contracts.skills import SkillContext
from charter_skills._data import day_of, load, money, plain, upper

MAX_RESULTS = 5  # the contract's limits.max_results: more would be a contract violation
SOURCE_NAMES = {"national": "国家", "province_A": "省份A", "province_B": "省份B"}


@dataclass(frozen=True)
class Policy:
    id: str
    title: str
    effective_date: str  # YYYY-MM-DD
    source: str  # national / province_A / province_B
    summary: str
    keywords: tuple[str, ...]

    @property
    def year(self) -> int:
        return int(self.effective_date[:4])

    def matches(self, terms: Sequence[str]) -> bool:
        """Every term occurs in the title, the summary or a keyword."""
        haystack = (self.title, self.summary, *self.keywords)
        return all(any(t in h for h in haystack) for t in terms)


def policies() -> tuple[Policy, ...]:
    return tuple(
        Policy(
            id=p["id"],
            title=p["title"],
            effective_date=p["effective_date"],
            source=p["source"],
            summary=p["summary"],
            keywords=tuple(p["keywords"]),
        )
        for p in load("policies")["policies"]
    )


def _scope_text(year_range: Sequence[int] | None, region: str | None) -> str:
    where = SOURCE_NAMES[region] if region else "国家及各省"
    years = f"{year_range[0]}-{year_range[1]}年" if year_range else "2020-2023年"
    return f"{years}{where}"


class PolicySearch:
    """Policies whose title, summary or keywords contain every word of ``keyword``, newest
    first, at most five; ``year_range`` (inclusive) and ``region`` narrow them, ``scope:
    national`` keeps the central ones only."""

    name = "policy_search"
    description = "检索2020-2023年国家及省级政策文件"

    def __init__(self, corpus: Sequence[Policy] | None = None) -> None:
        self.corpus = tuple(corpus) if corpus is not None else policies()

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        keyword = str(args["keyword"]).strip()
        terms = keyword.split()
        year_range = args.get("year_range")
        region = args.get("region")
        if region is None and args.get("scope") == "national":
            region = "national"
        found = [
            p
            for p in self.corpus
            if p.matches(terms)
            and (year_range is None or year_range[0] <= p.year <= year_range[1])
            and (region is None or p.source == region)
        ]
        found.sort(key=lambda p: (p.effective_date, p.id), reverse=True)
        shown = found[:MAX_RESULTS]
        scope = _scope_text(year_range, region)
        if not found:
            summary = (
                f"在{scope}的政策中未检索到与“{keyword}”相关的文件，"
                "可以换个关键词或调整年份范围后再试。"
            )
        elif len(found) > MAX_RESULTS:
            summary = (
                f"在{scope}的政策中共检索到{len(found)}份与“{keyword}”相关的文件，"
                f"以下是最新的{MAX_RESULTS}份。"
            )
        else:
            summary = f"在{scope}的政策中检索到{len(found)}份与“{keyword}”相关的文件。"
        return {
            "results": [
                {
                    "title": p.title,
                    "effective_date": p.effective_date,
                    "source": p.source,
                    "summary": p.summary,
                }
                for p in shown
            ],
            "total": len(found),
            "summary": summary,
        }


@dataclass(frozen=True)
class Account:
    tail: str
    type: str
    balance: str  # exact decimal string
    currency: str


class AccountBalance:
    """The balance of the demo account whose card ends in ``account_tail``; an unknown tail is
    an empty result that says so (not an error: the user may have mistyped). The demo accounts
    are today's (as ``transfer`` takes them): the balance is stated as of the turn's day when
    its clock was set, else as of the data's ``as_of`` (``day_of``)."""

    name = "account_balance"
    description = "按卡号后四位查询演示账户余额"

    def __init__(self, accounts: Sequence[Account] | None = None, as_of: str | None = None):
        data = load("accounts")
        self.accounts = (
            tuple(accounts)
            if accounts is not None
            else tuple(Account(**a) for a in data["accounts"])
        )
        self.as_of = as_of or str(data["as_of"])

    def __call__(
        self, args: Mapping[str, Any], *, context: SkillContext | None = None
    ) -> dict[str, Any]:
        as_of = day_of(context, self.as_of)
        tail = str(args["account_tail"])
        account = next((a for a in self.accounts if a.tail == tail), None)
        if account is None:
            return {
                "results": [],
                "summary": f"没有查到卡号后四位为{tail}的账户，请核对后重新输入。",
            }
        amount = money(account.balance)
        # the finance pack requires every amount in digits and in capitals, equal to the cent
        words = upper(amount)
        digits = f"¥{amount:,.2f}" if amount >= 0 else f"-¥{-amount:,.2f}"
        return {
            "results": [
                {
                    "account_tail": account.tail,
                    "account_type": account.type,
                    "balance": plain(amount),
                    "balance_upper": words,
                    "currency": account.currency,
                    "as_of": as_of,
                }
            ],
            "summary": (
                f"尾号{account.tail}的{account.type}账户余额为{digits}（{words}），"
                f"数据截至{as_of}。"
            ),
        }


@dataclass(frozen=True)
class Report:
    year: int
    quarter: int
    revenue: str  # exact decimal strings, yuan
    net_profit: str
    published: str  # YYYY-MM-DD


class QuarterlyReport:
    """The demo bank's quarterly results (revenue and net profit) for one year and quarter; a
    quarter not published yet is an empty result that says so."""

    name = "quarterly_report"
    description = "查询演示银行某年某季度的营业收入与净利润"

    def __init__(self, reports: Sequence[Report] | None = None) -> None:
        data = load("reports")
        self.company = str(data["company"])
        self.reports = (
            tuple(reports) if reports is not None else tuple(Report(**r) for r in data["reports"])
        )

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        year, quarter = int(args["year"]), int(args["quarter"])
        found = next((r for r in self.reports if (r.year, r.quarter) == (year, quarter)), None)
        if found is None:
            return {
                "results": [],
                "summary": (
                    f"{self.company}{year}年第{quarter}季度的业绩报告尚未发布或不在资料范围内"
                    "（目前可查2022年第1季度至2026年第3季度）。"
                ),
            }
        revenue, profit = money(found.revenue), money(found.net_profit)
        return {
            "results": [
                {
                    "year": found.year,
                    "quarter": found.quarter,
                    "revenue": plain(revenue),
                    "revenue_upper": upper(revenue),
                    "net_profit": plain(profit),
                    "net_profit_upper": upper(profit),
                    "published": found.published,
                }
            ],
            "summary": (
                f"{self.company}{found.year}年第{found.quarter}季度营业收入¥{revenue:,.2f}"
                f"（{upper(revenue)}），净利润¥{profit:,.2f}（{upper(profit)}），"
                f"报告发布于{found.published}。"
            ),
        }
