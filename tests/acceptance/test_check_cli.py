"""`charter check` on realistic model outputs of the three first-party domains.

Every case pins what the rules say should happen, worked out from ``domains/*/rules.yaml`` and
``rulesets/*/rules.yaml`` (not copied from the engine's output): the verdict, the rules that
failed, each finding's evidence and whether a repair fixed it, the repaired text, the text to
send and the exit status.

Rules every domain inherits, in pack order: no-absolute-terms (retry), price-format (fix
reformat money), external-link-disclaimer (fix annotate), uncertainty-marker (fix prepend);
then the domain's own rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Result(Protocol):
    code: int
    out: str
    err: str


class RunCli(Protocol):
    """The ``run_cli`` and ``run_console_script`` fixtures of ``conftest.py``."""

    def __call__(self, *args: str, stdin: str | None = None) -> Result: ...


SAFE = {
    "finance": "抱歉，这个问题涉及合规要求，我暂时无法回答，已为您转接人工客服。",
    "ecommerce": "抱歉，这个问题我暂时无法回答，已为您转接人工客服。",
    "medical": "抱歉，我不能提供诊断结论。请您尽快到正规医院就诊，由医生当面诊断。",
}

INHERITED = [
    "no-absolute-terms",
    "price-format",
    "external-link-disclaimer",
    "uncertainty-marker",
    "claims-backed-by-memory",
]
RULES = {
    "finance": [
        *INHERITED,
        "amount-upper-and-lower",
        "date-format",
        "tax-rate-cites-policy",
        "yield-disclaimer",
    ],
    "ecommerce": [*INHERITED, "no-lowest-price-claims", "promotion-validity"],
    "medical": [*INHERITED, "no-diagnosis", "drug-advice-disclaimer"],
}

# rules with a `when` guard: skipped unless it holds
GUARDED = frozenset(
    {
        "uncertainty-marker",
        "tax-rate-cites-policy",
        "yield-disclaimer",
        "promotion-validity",
        "drug-advice-disclaimer",
    }
)

ACTION = {
    "no-absolute-terms": "retry",
    "price-format": "fix",
    "external-link-disclaimer": "fix",
    "uncertainty-marker": "fix",
    "claims-backed-by-memory": "retry",
    "amount-upper-and-lower": "retry",
    "date-format": "fix",
    "tax-rate-cites-policy": "retry",
    "yield-disclaimer": "fix",
    "no-lowest-price-claims": "fix",
    "promotion-validity": "retry",
    "no-diagnosis": "block",
    "drug-advice-disclaimer": "fix",
}

MESSAGE = {
    "no-absolute-terms": "请勿使用“肯定”“绝对”“100%”“保证”等绝对化用语，改用留有余地的表述。",
    "price-format": "价格请写成“128.00元”或“¥128.00”，保留两位小数（四舍五入到分）。",
    "external-link-disclaimer": "每个外部链接后面都要紧跟“（请自行核实）”。",
    "uncertainty-marker": "本轮回答用到了低置信度信息，请在开头标注“[需人工确认]”并说明依据。",
    "claims-backed-by-memory": (
        "不要编造用户过去说过的话；记忆里没有的内容，请改用不涉及用户过去的说法。"
    ),
    "amount-upper-and-lower": (
        "每个金额都要同时写出小写数字和中文大写"
        "（如“¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）”），两者数值必须相等。"
    ),
    "date-format": "日期请统一写成 YYYY-MM-DD，例如 2024-05-01。",
    "tax-rate-cites-policy": "提到税率时，请注明适用的政策文件编号，例如“财税〔2023〕1号”。",
    "yield-disclaimer": "提到收益率或回报时，必须注明“历史业绩不预示未来表现”。",
    "no-lowest-price-claims": "请勿使用“最便宜”“最低价”“全网最低”等极限用语。",
    "promotion-validity": "介绍促销、优惠券或折扣时，必须写明有效期（如“有效期至2024-06-18”）。",
    "no-diagnosis": "不能给出诊断结论（如“你得了……”“确诊为……”），只能描述可能性并建议就医。",
    "drug-advice-disclaimer": "提到药品时必须附带“请遵医嘱”。",
}

EXIT = {"pass": 0, "fixed": 0, "retry": 1, "escalate": 1, "block": 1}

LOW_MEMORY = {"memory": {"min_confidence": 0.6}}
LOW_FLAG = {"low_confidence": True}
YIELD_NOTE = "（历史业绩不预示未来表现）"
DRUG_NOTE = "（请遵医嘱）"
LINK_NOTE = "（请自行核实）"
MARKER = "[需人工确认]"


@dataclass(frozen=True)
class Found:
    """One expected finding: the rule, the text it found, fixed by a repair, introduced by one."""

    rule: str
    evidence: tuple[str, ...]
    fixed: bool = False
    introduced: bool = False


def found(rule: str, *evidence: str, fixed: bool = False, introduced: bool = False) -> Found:
    return Found(rule, evidence, fixed, introduced)


@dataclass(frozen=True)
class Case:
    domain: str
    text: str
    verdict: str
    findings: tuple[Found, ...] = ()
    fixed_text: str | None = None
    context: dict[str, Any] | None = None
    held: tuple[str, ...] = ()  # guarded rules that applied and passed

    @property
    def outcomes(self) -> dict[str, str]:
        """Every rule of the pack on the original text: fail, pass, or skip (guard not met)."""
        failed = {f.rule for f in self.findings if not f.introduced}

        def outcome(rule: str) -> str:
            if rule in failed:
                return "fail"
            return "skip" if rule in GUARDED and rule not in self.held else "pass"

        return {rule: outcome(rule) for rule in RULES[self.domain]}

    @property
    def final_text(self) -> str:
        if self.verdict == "block":
            return SAFE[self.domain]
        return self.fixed_text if self.fixed_text is not None else self.text


def case(
    case_id: str,
    domain: str,
    text: str,
    verdict: str,
    *findings: Found,
    fixed_text: str | None = None,
    context: dict[str, Any] | None = None,
    held: tuple[str, ...] = (),
    xfail: str | None = None,
) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(
        Case(domain, text, verdict, findings, fixed_text, context, held),
        id=f"{domain}-{case_id}",
        marks=marks,
    )


FINANCE = [
    # The acceptance pair: equal upper- and lower-case values pass, a different value fails.
    case("upper-case-amount-equal", "finance", "¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）", "pass"),
    case(
        # 壹万贰仟元整 has no twin either, but the evidence of an `and` is its first failing
        # side ("every money ... has twin money_upper"), as the README shows
        "upper-case-amount-different",
        "finance",
        "¥12,345.60（壹万贰仟元整）",
        "retry",
        found("amount-upper-and-lower", "¥12,345.60"),
    ),
    case(
        "contract-amount-and-iso-date",
        "finance",
        "合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。",
        "pass",
    ),
    case(
        "readme-wrong-upper-case-and-yield",
        "finance",
        "合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。",
        "retry",
        found("amount-upper-and-lower", "¥12,345.60"),
        found("yield-disclaimer", "5.2%", fixed=True),
        fixed_text=f"合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。{YIELD_NOTE}",
    ),
    case(
        "yuan-amount-without-upper-case",
        "finance",
        "本次转账金额为5000元。",
        "retry",
        found("price-format", "5000元", fixed=True),
        found("amount-upper-and-lower", "5000元"),
        fixed_text="本次转账金额为5000.00元。",
    ),
    case(
        "upper-case-amount-alone",
        "finance",
        "本次转账金额为伍仟元整。",
        "retry",
        found("amount-upper-and-lower", "伍仟元整"),
    ),
    case(
        "fee-without-upper-case",
        "finance",
        "转账¥100.00（壹佰元整），手续费¥5.00。",
        "retry",
        found("amount-upper-and-lower", "¥5.00"),
    ),
    case(
        "upper-case-with-zero-and-fen",
        "finance",
        "本期利息¥100.05（壹佰元零伍分）已入账。",
        "pass",
    ),
    case(
        "one-decimal-amount-reformatted",
        "finance",
        "手续费为¥12.5（壹拾贰元伍角）。",
        "fixed",
        found("price-format", "¥12.5", fixed=True),
        fixed_text="手续费为¥12.50（壹拾贰元伍角）。",
    ),
    case(
        "wan-yuan-amount-and-monthly-rate",
        "finance",
        "贷款本金1.2万元（壹万贰仟元整），月利率0.5%，还款日为每月15日。",
        "fixed",
        found("price-format", "1.2万元", fixed=True),
        fixed_text="贷款本金12000.00元（壹万贰仟元整），月利率0.5%，还款日为每月15日。",
    ),
    case(
        "wan-yuan-amount-and-annual-yield",
        "finance",
        "该理财产品起购金额1万元（壹万元整），近一年年化收益率为3.85%。",
        "fixed",
        found("price-format", "1万元", fixed=True),
        found("yield-disclaimer", "3.85%", fixed=True),
        fixed_text=f"该理财产品起购金额10000.00元（壹万元整），近一年年化收益率为3.85%。{YIELD_NOTE}",
    ),
    case(
        "chinese-date-rewritten",
        "finance",
        "您的定期存款将于2025年3月8日到期，本金¥50,000.00（伍万元整）。",
        "fixed",
        found("date-format", "2025年3月8日", fixed=True),
        fixed_text="您的定期存款将于2025-03-08到期，本金¥50,000.00（伍万元整）。",
    ),
    case(
        "slash-and-dot-dates-rewritten",
        "finance",
        "起息日为2024/1/15，到期日为2025.01.15。",
        "fixed",
        found("date-format", "2024/1/15", "2025.01.15", fixed=True),
        fixed_text="起息日为2024-01-15，到期日为2025-01-15。",
    ),
    case(
        "date-range-without-second-year",
        "finance",
        "本期理财产品募集期为2024年5月1日至6月30日。",
        "retry",
        found("date-format", "2024年5月1日", "6月30日"),
        fixed_text="本期理财产品募集期为2024-05-01至6月30日。",
    ),
    case(
        "year-and-month-only",
        "finance",
        "存款利率调整自2024年5月起执行。",
        "retry",
        found("date-format", "2024年5月"),
    ),
    case(
        "tax-rate-without-policy",
        "finance",
        "目前小微企业的增值税税率为3%。",
        "retry",
        found("tax-rate-cites-policy", "3%"),
    ),
    case(
        "levy-rate-with-announcement",
        "finance",
        "小规模纳税人增值税征收率为1%，依据财政部 税务总局公告2023年第19号。",
        "pass",
        held=("tax-rate-cites-policy",),
    ),
    case(
        "tax-rate-with-bracketed-policy-and-date",
        "finance",
        "自2018年5月1日起，增值税税率调整为16%，依据财税[2018]32号。",
        "fixed",
        found("date-format", "2018年5月1日", fixed=True),
        fixed_text="自2018-05-01起，增值税税率调整为16%，依据财税[2018]32号。",
        held=("tax-rate-cites-policy",),
    ),
    case(
        # 2024年12月31日 -> 2024-12-31 is one character shorter: 3% is now within 20
        # characters of 税率, so the tax rule applies to the repaired text and fails there.
        "date-repair-brings-tax-rate-into-range",
        "finance",
        "增值税税率自2024年12月31日起将统一调整为3%。",
        "retry",
        found("date-format", "2024年12月31日", fixed=True),
        found("tax-rate-cites-policy", "3%", introduced=True),
        fixed_text="增值税税率自2024-12-31起将统一调整为3%。",
    ),
    case(
        "guaranteed-absolute-yield",
        "finance",
        "这款产品保证年化收益8%，绝对安全。",
        "retry",
        found("no-absolute-terms", "保证", "绝对"),
        found("yield-disclaimer", "8%", fixed=True),
        fixed_text=f"这款产品保证年化收益8%，绝对安全。{YIELD_NOTE}",
    ),
    case(
        "hundred-percent-principal",
        "finance",
        "这款产品百分之百保本，年化收益率4%。",
        "retry",
        found("no-absolute-terms", "百分之百"),
        # 百分之百 is a percentage too, and it sits within 20 characters of 收益
        found("yield-disclaimer", "百分之百", "4%", fixed=True),
        fixed_text=f"这款产品百分之百保本，年化收益率4%。{YIELD_NOTE}",
    ),
    case(
        # The acceptance sentence: 不能保证收益, 绝对值 and 保证金 do not trip the ban.
        "negated-guarantee-and-compounds",
        "finance",
        "我们不能保证收益，投资有风险；绝对值越大波动越大，保证金另行收取。",
        "pass",
    ),
    case(
        "excused-and-unexcused-guarantee",
        "finance",
        "我们不能保证收益，但保证本金安全。",
        "retry",
        found("no-absolute-terms", "保证"),  # the second one: see the test on its span below
    ),
    case(
        "cannot-guarantee-a-yield",
        "finance",
        "投资有风险，我们无法保证本金安全，也不能保证年化收益达到4.5%。",
        "fixed",
        found("yield-disclaimer", "4.5%", fixed=True),
        fixed_text=f"投资有风险，我们无法保证本金安全，也不能保证年化收益达到4.5%。{YIELD_NOTE}",
    ),
    case(
        "index-gain-with-disclaimer",
        "finance",
        "该指数今年以来涨幅达12.5%，历史业绩不预示未来表现。",
        "pass",
        held=("yield-disclaimer",),
    ),
    case(
        "fund-purchase-several-rules",
        "finance",
        "您购买的基金¥10,000.00（壹万元整）已于2024年6月1日确认，预计年化回报4.2%，到期保证兑付。",
        "retry",
        found("no-absolute-terms", "保证"),
        found("date-format", "2024年6月1日", fixed=True),
        found("yield-disclaimer", "4.2%", fixed=True),
        fixed_text=(
            "您购买的基金¥10,000.00（壹万元整）已于2024-06-01确认，预计年化回报4.2%，"
            f"到期保证兑付。{YIELD_NOTE}"
        ),
    ),
    case(
        "link-and-email",
        "finance",
        "详情请查看https://www.bank.example.com/fund，或发邮件至service@bank.example.com咨询。",
        "fixed",
        found("external-link-disclaimer", "https://www.bank.example.com/fund", fixed=True),
        fixed_text=(
            f"详情请查看https://www.bank.example.com/fund{LINK_NOTE}，"
            "或发邮件至service@bank.example.com咨询。"
        ),
    ),
    case(
        "claimed-wish-without-memory",
        "finance",
        "您上周提到想把定期存款换成大额存单，本期大额存单起存金额为20万元。",
        "retry",
        found("price-format", "20万元", fixed=True),
        found("claims-backed-by-memory"),
        found("amount-upper-and-lower", "20万元"),
        fixed_text="您上周提到想把定期存款换成大额存单，本期大额存单起存金额为200000.00元。",
    ),
    case(
        "claimed-wish-backed-by-memory",
        "finance",
        "您上周提到想把定期存款换成大额存单，我们为您整理了本期产品。",
        "pass",
        context={"memory": {"facts": ["用户想把定期存款换成大额存单（2026-01-02 确认）"]}},
    ),
    case(
        "phones-and-email",
        "finance",
        "您可以拨打95588或发送邮件至vip@bank.example.com查询，理财经理电话138-1234-5678。",
        "pass",
    ),
    case(
        "low-memory-confidence",
        "finance",
        "将使用您上次留下的对公账户办理转账。",
        "fixed",
        found("uncertainty-marker", fixed=True),
        fixed_text=f"{MARKER}将使用您上次留下的对公账户办理转账。",
        context=LOW_MEMORY,
    ),
    case(
        # the marker is needed below the threshold (0.72), not at it
        "memory-confidence-at-threshold",
        "finance",
        "将使用您上次留下的对公账户办理转账。",
        "pass",
        context={"memory": {"min_confidence": 0.72}},
    ),
    case(
        "yield-and-link-at-the-end",
        "finance",
        "年化收益率3.5%，详见https://fund.example.com",
        "fixed",
        found("external-link-disclaimer", "https://fund.example.com", fixed=True),
        found("yield-disclaimer", "3.5%", fixed=True),
        # repairs run in rule order: the link note first, then the appended disclaimer
        fixed_text=f"年化收益率3.5%，详见https://fund.example.com{LINK_NOTE}{YIELD_NOTE}",
    ),
    case(
        "full-width-percent-yield",
        "finance",
        "该基金年化收益率3.5％。",
        "fixed",
        found("yield-disclaimer", "3.5％", fixed=True),
        fixed_text=f"该基金年化收益率3.5％。{YIELD_NOTE}",
    ),
    case(
        "contract-number-is-not-a-date",
        "finance",
        "贷款合同编号HT20240501，借款金额¥200,000.00（贰拾万元整）。",
        "pass",
    ),
    case(
        "date-inside-a-link",
        "finance",
        "关于调整存款利率的公告原文见https://www.bank.example.com/notice/2024/05/01",
        "fixed",
        found(
            "external-link-disclaimer",
            "https://www.bank.example.com/notice/2024/05/01",
            fixed=True,
        ),
        fixed_text=(
            f"关于调整存款利率的公告原文见https://www.bank.example.com/notice/2024/05/01{LINK_NOTE}"
        ),
    ),
]

ECOMMERCE = [
    case(
        "claimed-complaint-without-memory",
        "ecommerce",
        "您之前反馈过快递总是放驿站，这次已备注送货上门。",
        "retry",
        found("claims-backed-by-memory"),
    ),
    case(
        "claimed-complaint-backed-by-memory",
        "ecommerce",
        "您之前反馈过快递总是放驿站，这次已备注送货上门。",
        "pass",
        context={
            "memory": {"facts": [{"key": "delivery", "value": "快递总是放驿站，希望送货上门"}]}
        },
    ),
    case(
        "lowest-price-and-integer-price",
        "ecommerce",
        "这款耳机是全网最低价，现价199元。",
        "fixed",
        found("price-format", "199元", fixed=True),
        # 全网最低 and 最低价 overlap: the first is replaced, the rest of the phrase stays
        found("no-lowest-price-claims", "全网最低", "最低价", fixed=True),
        fixed_text="这款耳机是超值价，现价199.00元。",
    ),
    case(
        "coupon-without-validity",
        "ecommerce",
        "现在下单可领满300减50优惠券。",
        "retry",
        found("promotion-validity", "优惠券"),
    ),
    case(
        "coupon-with-validity-and-link",
        "ecommerce",
        "满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon",
        "fixed",
        found("external-link-disclaimer", "https://shop.example.com/coupon", fixed=True),
        fixed_text=f"满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon{LINK_NOTE}",
        held=("promotion-validity",),
    ),
    case(
        "plain-price",
        "ecommerce",
        "这件外套售价299.00元，七天无理由退换。",
        "pass",
    ),
    case(
        "flash-sale-without-validity",
        "ecommerce",
        "限时秒杀：原价¥399，秒杀价¥199！",
        "retry",
        found("price-format", "¥399", "¥199", fixed=True),
        found("promotion-validity", "限时", "秒杀", "秒杀"),
        fixed_text="限时秒杀：原价¥399.00，秒杀价¥199.00！",
    ),
    case(
        "sale-price-with-event-period",
        "ecommerce",
        "双十一活动价¥1,299.00，活动时间11月1日至11月11日。",
        "pass",
        held=("promotion-validity",),
    ),
    case(
        "discount-with-date-range",
        "ecommerce",
        "本周末全场商品打折促销，2024-06-15至2024-06-16有效。",
        "pass",
        held=("promotion-validity",),
    ),
    case(
        "spend-and-save-with-deadline",
        "ecommerce",
        "满199元减20元，优惠券截至2024年12月31日有效。",
        "fixed",
        found("price-format", "199元", "20元", fixed=True),
        fixed_text="满199.00元减20.00元，优惠券截至2024年12月31日有效。",
        held=("promotion-validity",),
    ),
    case(
        "hundred-percent-genuine",
        "ecommerce",
        "本店承诺全场包邮，100%正品保障。",
        "retry",
        found("no-absolute-terms", "100%"),
    ),
    case(
        "all-time-low-and-absolute",
        "ecommerce",
        "这款扫地机器人是史上最低价，绝对划算！",
        "retry",
        found("no-absolute-terms", "绝对"),
        found("no-lowest-price-claims", "史上最低", "最低价", fixed=True),
        fixed_text="这款扫地机器人是超值价，绝对划算！",
    ),
    case(
        "cheapest-and-guarantee",
        "ecommerce",
        "全网最便宜的就是我们家，保证正品。",
        "retry",
        found("no-absolute-terms", "保证"),
        found("no-lowest-price-claims", "最便宜", fixed=True),
        fixed_text="全网超值的就是我们家，保证正品。",
    ),
    case(
        "cannot-guarantee-delivery",
        "ecommerce",
        "物流时效受天气影响，我们无法保证明天一定送达，但会尽快为您催件。",
        "pass",
    ),
    case(
        "kuai-qian-price",
        "ecommerce",
        "这个数据线只要15块钱，包邮。",
        "fixed",
        found("price-format", "15块钱", fixed=True),
        fixed_text="这个数据线只要15.00元，包邮。",
    ),
    case(
        "dollar-price-cannot-become-yuan",
        "ecommerce",
        "海外直邮商品标价$25.5，约合人民币180元。",
        "retry",
        # both amounts are rewritten, but $25.50 still has no 元: the rule stays failed
        found("price-format", "$25.5", "人民币180元"),
        fixed_text="海外直邮商品标价$25.50，约合人民币180.00元。",
    ),
    case(
        "three-repairs-at-once",
        "ecommerce",
        "这款手机壳价格最低，只要¥9.9，点击www.shop.example.com/case购买。",
        "fixed",
        found("price-format", "¥9.9", fixed=True),
        found("external-link-disclaimer", "www.shop.example.com/case", fixed=True),
        found("no-lowest-price-claims", "价格最低", fixed=True),
        fixed_text=f"这款手机壳超值，只要¥9.90，点击www.shop.example.com/case{LINK_NOTE}购买。",
    ),
    case(
        "only-unformatted-prices-rewritten",
        "ecommerce",
        "原价¥1,299.00元，现价¥999元，立减300元。",
        "fixed",
        found("price-format", "¥999元", "300元", fixed=True),
        fixed_text="原价¥1,299.00元，现价¥999.00元，立减300.00元。",
    ),
    case(
        "invoice-email-and-hotline",
        "ecommerce",
        "如需开具发票，请发送订单号至invoice@shop.example.com，或拨打客服电话400-123-4567。",
        "pass",
    ),
    case(
        "low-confidence-address",
        "ecommerce",
        "您的订单将发往上次使用的收货地址：上海市浦东新区世纪大道100号。",
        "fixed",
        found("uncertainty-marker", fixed=True),
        fixed_text=f"{MARKER}您的订单将发往上次使用的收货地址：上海市浦东新区世纪大道100号。",
        context=LOW_FLAG,
    ),
    case(
        "low-confidence-with-marker",
        "ecommerce",
        f"{MARKER}您的快递预计明天送达。",
        "pass",
        context=LOW_FLAG,
        held=("uncertainty-marker",),
    ),
    case(
        "low-confidence-and-lowest-price",
        "ecommerce",
        "这款耳机是全网最低价。",
        "fixed",
        found("uncertainty-marker", fixed=True),
        found("no-lowest-price-claims", "全网最低", "最低价", fixed=True),
        fixed_text=f"{MARKER}这款耳机是超值价。",
        context=LOW_FLAG,
    ),
    case(
        "confident-memory",
        "ecommerce",
        "这款空气炸锅现在299.00元，比平时便宜不少。",
        "pass",
        context={"memory": {"min_confidence": 0.9}},
    ),
    case(
        "link-followed-by-ascii-parenthesis",
        "ecommerce",
        "商品详情见https://shop.example.com/item/123(官方店铺)。",
        "fixed",
        found("external-link-disclaimer", "https://shop.example.com/item/123", fixed=True),
        fixed_text=f"商品详情见https://shop.example.com/item/123{LINK_NOTE}(官方店铺)。",
    ),
    case(
        "low-confidence-link-first",
        "ecommerce",
        "https://shop.example.com/coupon 领取优惠券，有效期至2024-06-18。",
        "fixed",
        found("external-link-disclaimer", "https://shop.example.com/coupon", fixed=True),
        found("uncertainty-marker", fixed=True),
        fixed_text=f"{MARKER}https://shop.example.com/coupon{LINK_NOTE} 领取优惠券，有效期至2024-06-18。",
        context=LOW_FLAG,
        held=("promotion-validity",),
    ),
    case(
        "spend-and-save-during-the-event",
        "ecommerce",
        "参加满减活动的商品，活动期间不支持退换。",
        "pass",
        held=("promotion-validity",),
    ),
]

MEDICAL = [
    case(
        "you-have-gastritis",
        "medical",
        "根据您的描述，你得了急性胃炎，吃点药就好。",
        "block",
        found("no-diagnosis", "你得了"),
    ),
    case(
        "can-be-sure-it-is-a-cold",
        "medical",
        "从症状看可以确定是病毒性感冒。",
        "block",
        found("no-diagnosis", "可以确定是"),
    ),
    case(
        "cannot-diagnose-see-a-doctor",
        "medical",
        "您的症状可能与多种原因有关，无法确诊为某种疾病，建议尽快到医院就诊。",
        "pass",
    ),
    case(
        "drug-without-disclaimer",
        "medical",
        "发热时可以服用布洛芬缓解症状。",
        "fixed",
        found("drug-advice-disclaimer", "布洛芬", fixed=True),
        fixed_text=f"发热时可以服用布洛芬缓解症状。{DRUG_NOTE}",
    ),
    case(
        "drug-alias",
        "medical",
        "发烧可以吃扑热息痛。",
        "fixed",
        found("drug-advice-disclaimer", "扑热息痛", fixed=True),
        fixed_text=f"发烧可以吃扑热息痛。{DRUG_NOTE}",
    ),
    case(
        "drug-with-disclaimer-and-negated-guarantee",
        "medical",
        "可以考虑服用对乙酰氨基酚退烧，请遵医嘱。我们不能保证一定见效。",
        "pass",
        held=("drug-advice-disclaimer",),
    ),
    case(
        "prescription-drug-with-disclaimer",
        "medical",
        "阿莫西林是处方药，需要医生开具处方，请遵医嘱。",
        "pass",
        held=("drug-advice-disclaimer",),
    ),
    case(
        "longest-drug-name-wins",
        "medical",
        "由医生诊断为偏头痛后，可以按医嘱服用布洛芬缓释胶囊。",
        "fixed",
        # 诊断为 after 由医生 is excused; 按医嘱 is not the required 请遵医嘱
        found("drug-advice-disclaimer", "布洛芬缓释胶囊", fixed=True),
        fixed_text=f"由医生诊断为偏头痛后，可以按医嘱服用布洛芬缓释胶囊。{DRUG_NOTE}",
    ),
    case(
        "diagnosis-drug-and-absolute",
        "medical",
        "你得了流感，吃奥司他韦肯定能好。",
        "block",
        found("no-absolute-terms", "肯定"),
        found("no-diagnosis", "你得了"),
        found("drug-advice-disclaimer", "奥司他韦"),
    ),
    case(
        "certainly-an-allergy",
        "medical",
        "您的症状肯定是过敏引起的。",
        "block",
        found("no-absolute-terms", "肯定"),
        found("no-diagnosis", "肯定是"),
    ),
    case(
        "you-have-diabetes-take-metformin",
        "medical",
        "您患有糖尿病，需要长期服用二甲双胍。",
        "block",
        found("no-diagnosis", "您患有"),
        found("drug-advice-disclaimer", "二甲双胍"),
    ),
    case(
        "conditional-is-not-a-diagnosis",
        "medical",
        "如果您患有高血压，服药前请先咨询医生。",
        "pass",
    ),
    case(
        "cannot-be-certain",
        "medical",
        "仅凭描述无法肯定病因，建议到医院做进一步检查。",
        "pass",
    ),
    case(
        "self-care-advice",
        "medical",
        "您好，建议多喝温水、注意休息，如症状持续超过3天请及时就医。",
        "pass",
    ),
    case(
        "absolute-safety-claims",
        "medical",
        "这个药绝对安全，100%没有副作用，放心吃布洛芬。",
        "retry",
        found("no-absolute-terms", "绝对", "100%"),
        found("drug-advice-disclaimer", "布洛芬", fixed=True),
        fixed_text=f"这个药绝对安全，100%没有副作用，放心吃布洛芬。{DRUG_NOTE}",
    ),
    case(
        "registration-fee",
        "medical",
        "普通门诊挂号费为20元，可在线支付。",
        "fixed",
        found("price-format", "20元", fixed=True),
        fixed_text="普通门诊挂号费为20.00元，可在线支付。",
    ),
    case(
        "booking-link-and-landline",
        "medical",
        "您可以在 https://www.hospital.example.com/booking 预约门诊，或拨打010-12345678。",
        "fixed",
        found("external-link-disclaimer", "https://www.hospital.example.com/booking", fixed=True),
        fixed_text=(
            f"您可以在 https://www.hospital.example.com/booking{LINK_NOTE} 预约门诊，"
            "或拨打010-12345678。"
        ),
    ),
    case(
        "drug-and-email-with-disclaimer",
        "medical",
        "腹泻时可以服用蒙脱石散，请遵医嘱；如需咨询可发邮件至doctor@hospital.example.com。",
        "pass",
        held=("drug-advice-disclaimer",),
    ),
    case(
        "low-memory-confidence-and-drug",
        "medical",
        "根据您之前提到的过敏史，服用氯雷他定前请先告知医生。",
        "fixed",
        found("uncertainty-marker", fixed=True),
        found("drug-advice-disclaimer", "氯雷他定", fixed=True),
        fixed_text=f"{MARKER}根据您之前提到的过敏史，服用氯雷他定前请先告知医生。{DRUG_NOTE}",
        # the claim about the user's past is backed by a recalled memory
        context={"memory": {"min_confidence": 0.6, "facts": ["用户的过敏史：青霉素过敏"]}},
    ),
    case(
        "claimed-history-without-memory",
        "medical",
        "您之前提到对青霉素过敏，请避免使用阿莫西林，请遵医嘱。",
        "retry",
        found("claims-backed-by-memory"),
        held=("drug-advice-disclaimer",),
    ),
    case(
        "confident-memory-appointment",
        "medical",
        "您预约的是2024-05-20上午的内科门诊。",
        "pass",
        context={"memory": {"min_confidence": 0.95}},
    ),
    case(
        # block skips every repair: the marker is not prepended, the safe message is sent
        "low-confidence-diagnosis",
        "medical",
        "根据您上次的化验结果，您患有缺铁性贫血。",
        "block",
        found("uncertainty-marker"),
        found("no-diagnosis", "您患有"),
        context=LOW_FLAG,
    ),
    case(
        "conditional-and-drug",
        "medical",
        "如果你得了流感，可以在医生指导下服用奥司他韦。",
        "fixed",
        found("drug-advice-disclaimer", "奥司他韦", fixed=True),
        fixed_text=f"如果你得了流感，可以在医生指导下服用奥司他韦。{DRUG_NOTE}",
    ),
]

CASES = FINANCE + ECOMMERCE + MEDICAL


def check_json(run_cli: RunCli, c: Case) -> tuple[int, dict[str, Any]]:
    """Run ``charter check --format json`` on a case; the exit code and the parsed document."""
    args = ["check", "--domain", c.domain, "--format", "json"]
    if c.context is not None:
        args += ["--context", json.dumps(c.context, ensure_ascii=False)]
    result = run_cli(*args, c.text)
    assert result.err == ""
    doc: dict[str, Any] = json.loads(result.out)
    return result.code, doc


@pytest.mark.parametrize("c", CASES)
def test_check_pins_verdict_findings_and_repairs(run_cli: RunCli, c: Case) -> None:
    code, doc = check_json(run_cli, c)

    assert doc["pack"] == c.domain
    assert doc["text"] == c.text
    assert doc["verdict"] == c.verdict
    assert list(doc["outcomes"].items()) == list(c.outcomes.items())
    got = [
        Found(f["rule"], tuple(f["evidence"]), f["fixed"], f["introduced"]) for f in doc["findings"]
    ]
    assert got == list(c.findings)
    for f in doc["findings"]:
        assert (f["action"], f["message"]) == (ACTION[f["rule"]], MESSAGE[f["rule"]])
        # evidence is the text at the spans: of the output, or of the repaired text
        # for a failure a repair introduced
        where = doc["fixed_text"] if f["introduced"] else c.text
        assert [where[s:e] for s, e in f["spans"]] == f["evidence"]
    assert doc["fixed_text"] == c.fixed_text
    assert doc["final_text"] == c.final_text
    assert code == EXIT[c.verdict]


def test_the_table_covers_every_domain_and_rule() -> None:
    cases: list[Case] = [p.values[0] for p in CASES]
    per_domain = {d: [c for c in cases if c.domain == d] for d in RULES}
    assert all(len(cs) >= 12 for cs in per_domain.values()), {
        d: len(cs) for d, cs in per_domain.items()
    }
    for domain, rules in RULES.items():
        failing = {f.rule for c in per_domain[domain] for f in c.findings}
        assert failing == set(rules), (domain, set(rules) - failing)
        verdicts = {c.verdict for c in per_domain[domain]}
        assert {"pass", "fixed", "retry"} <= verdicts, (domain, verdicts)


# ---- the acceptance sentences, spelled out -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("¥12,345.60（壹万贰仟叁佰肆拾伍元陆角）", "pass"),
        ("¥12,345.60（壹万贰仟元整）", "retry"),
    ],
)
def test_upper_case_amount_must_equal_the_digits(run_cli: RunCli, text: str, verdict: str) -> None:
    result = run_cli("check", "--domain", "finance", "--format", "json", text)
    doc = json.loads(result.out)
    assert doc["verdict"] == verdict
    assert doc["outcomes"]["amount-upper-and-lower"] == ("pass" if verdict == "pass" else "fail")


@pytest.mark.parametrize("domain", ["finance", "ecommerce", "medical"])
@pytest.mark.parametrize(
    "text",
    ["我们不能保证收益。", "绝对值越大，波动越大。", "我们无法保证明天送达。", "保证金另行收取。"],
)
def test_negations_and_compounds_do_not_trip_the_ban(
    run_cli: RunCli, domain: str, text: str
) -> None:
    result = run_cli("check", "--domain", domain, "--format", "json", text)
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"], doc["findings"]) == (0, "pass", [])
    assert doc["outcomes"]["no-absolute-terms"] == "pass"


def test_only_the_unexcused_occurrence_is_reported(run_cli: RunCli) -> None:
    text = "我们不能保证收益，但保证本金安全。"
    result = run_cli("check", "--domain", "finance", "--format", "json", text)
    (finding,) = json.loads(result.out)["findings"]
    assert (finding["rule"], finding["spans"]) == ("no-absolute-terms", [[10, 12]])
    assert text.index("但保证") + 1 == 10


# ---- the text format, exactly --------------------------------------------------------------

TEXT_OUTPUTS = [
    pytest.param(
        "finance",
        "合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。",
        None,
        1,
        "finance: retry\n"
        f"  ✗ amount-upper-and-lower (retry): {MESSAGE['amount-upper-and-lower']}"
        " — found '¥12,345.60'\n"
        f"  ✗ yield-disclaimer (fix) [fixed]: {MESSAGE['yield-disclaimer']} — found '5.2%'\n"
        "fixed text:\n"
        f"  合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。{YIELD_NOTE}\n",
        id="readme-example",
    ),
    pytest.param(
        "finance",
        "合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。",
        None,
        0,
        "finance: pass\n",
        id="pass",
    ),
    pytest.param(
        "medical",
        "你得了流感，吃奥司他韦肯定能好。",
        None,
        1,
        "medical: block\n"
        f"  ✗ no-absolute-terms (retry): {MESSAGE['no-absolute-terms']} — found '肯定'\n"
        f"  ✗ no-diagnosis (block): {MESSAGE['no-diagnosis']} — found '你得了'\n"
        f"  ✗ drug-advice-disclaimer (fix): {MESSAGE['drug-advice-disclaimer']}"
        " — found '奥司他韦'\n"
        "sent instead:\n"
        f"  {SAFE['medical']}\n",
        id="block",
    ),
    pytest.param(
        "ecommerce",
        "您的订单将发往上次使用的收货地址：上海市浦东新区世纪大道100号。",
        '{"low_confidence": true}',
        0,
        "ecommerce: fixed\n"
        f"  ✗ uncertainty-marker (fix) [fixed]: {MESSAGE['uncertainty-marker']}\n"
        "fixed text:\n"
        f"  {MARKER}您的订单将发往上次使用的收货地址：上海市浦东新区世纪大道100号。\n",
        id="no-evidence",
    ),
    pytest.param(
        "finance",
        "增值税税率自2024年12月31日起将统一调整为3%。",
        None,
        1,
        "finance: retry\n"
        f"  ✗ date-format (fix) [fixed]: {MESSAGE['date-format']} — found '2024年12月31日'\n"
        f"  ✗ tax-rate-cites-policy (retry) [introduced by a repair]: "
        f"{MESSAGE['tax-rate-cites-policy']} — found '3%'\n"
        "fixed text:\n"
        "  增值税税率自2024-12-31起将统一调整为3%。\n",
        id="introduced",
    ),
    pytest.param(
        "ecommerce",
        "限时秒杀：原价¥399，秒杀价¥199！",
        None,
        1,
        "ecommerce: retry\n"
        f"  ✗ price-format (fix) [fixed]: {MESSAGE['price-format']} — found '¥399', '¥199'\n"
        f"  ✗ promotion-validity (retry): {MESSAGE['promotion-validity']}"
        " — found '限时', '秒杀', '秒杀'\n"
        "fixed text:\n"
        "  限时秒杀：原价¥399.00，秒杀价¥199.00！\n",
        id="several-evidence",
    ),
]


@pytest.mark.parametrize(("domain", "text", "context", "code", "expected"), TEXT_OUTPUTS)
def test_text_format(
    run_cli: RunCli, domain: str, text: str, context: str | None, code: int, expected: str
) -> None:
    args = ["check", "--domain", domain, text]
    if context is not None:
        args += ["--context", context]
    result = run_cli(*args)
    assert (result.code, result.out, result.err) == (code, expected, "")


def test_installed_console_script(run_console_script: RunCli) -> None:
    result = run_console_script(
        "check",
        "--domain",
        "finance",
        "合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。",
    )
    assert (result.code, result.out, result.err) == (1, TEXT_OUTPUTS[0].values[4], "")


# ---- where the text comes from -------------------------------------------------------------

DRUG_TEXT = "发热时可以服用布洛芬缓解症状。"
DRUG_FIXED = DRUG_TEXT + DRUG_NOTE


def _fixed_of(out: str) -> tuple[str, str, str | None]:
    doc = json.loads(out)
    return doc["verdict"], doc["text"], doc["fixed_text"]


def test_text_from_a_file(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "answer.txt"
    path.write_text(DRUG_TEXT, encoding="utf-8")
    result = run_cli("check", "--domain", "medical", "--format", "json", "--file", str(path))
    assert result.code == 0
    assert _fixed_of(result.out) == ("fixed", DRUG_TEXT, DRUG_FIXED)


def test_text_from_a_file_ending_with_a_newline(run_cli: RunCli, tmp_path: Path) -> None:
    # like stdin: the final newline goes, so an appended disclaimer stays on the same line
    path = tmp_path / "answer.txt"
    path.write_text(DRUG_TEXT + "\n", encoding="utf-8")
    result = run_cli("check", "--domain", "medical", "--format", "json", "--file", str(path))
    assert result.code == 0
    assert _fixed_of(result.out) == ("fixed", DRUG_TEXT, DRUG_FIXED)


def test_text_from_stdin(run_cli: RunCli) -> None:
    result = run_cli("check", "--domain", "medical", "--format", "json", stdin=DRUG_TEXT + "\n")
    assert result.code == 0
    assert _fixed_of(result.out) == ("fixed", DRUG_TEXT, DRUG_FIXED)


def test_text_from_stdin_in_text_format(run_cli: RunCli) -> None:
    result = run_cli("check", "--domain", "medical", stdin=DRUG_TEXT + "\n")
    assert result.code == 0
    assert result.out == (
        "medical: fixed\n"
        f"  ✗ drug-advice-disclaimer (fix) [fixed]: {MESSAGE['drug-advice-disclaimer']}"
        " — found '布洛芬'\n"
        "fixed text:\n"
        f"  {DRUG_FIXED}\n"
    )


def test_input_is_accepted_and_does_not_change_the_verdict(run_cli: RunCli) -> None:
    plain = run_cli("check", "--domain", "medical", "--format", "json", DRUG_TEXT)
    with_input = run_cli(
        "check", "--domain", "medical", "--format", "json", "--input", "发烧了吃什么药？", DRUG_TEXT
    )
    assert with_input.code == plain.code == 0
    assert with_input.out == plain.out


def test_an_argument_and_a_file_together_is_a_usage_error(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "answer.txt"
    path.write_text(DRUG_TEXT, encoding="utf-8")
    result = run_cli("check", "--domain", "medical", "--file", str(path), DRUG_TEXT)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "charter check: give the text as an argument, with --file, or on stdin "
        "(not both an argument and --file)\n"
    )


# ---- bad usage -----------------------------------------------------------------------------


def test_invalid_context_json_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli("check", "--domain", "finance", "--context", "{memory: 0.6}", "您好")
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("charter check: --context is not valid JSON: ")
    assert result.err.count("\n") == 1


def test_context_must_be_a_json_object(run_cli: RunCli) -> None:
    result = run_cli("check", "--domain", "finance", "--context", "[0.6]", "您好")
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "charter check: --context must be a JSON object\n",
    )


def test_unknown_domain_is_a_ch004_diagnostic(run_cli: RunCli) -> None:
    result = run_cli("check", "--domain", "insurance", "您好")
    assert result.code == 1
    assert result.out == (
        "insurance: CH004 unknown domain 'insurance'\n"
        "    hint: give a pack directory, the name of one under domains/ or rulesets/, or the "
        "name of a pack a plugin installed (charter plugins lists them)\n"
    )


def test_missing_domain_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli("check", "您好")
    assert result.code == 2
    assert "--domain" in result.err


@pytest.mark.parametrize(
    ("domain", "cwd"),
    [
        ("domains/finance", "."),
        ("domains/finance/", "."),
        ("domains/finance/pack.yaml", "."),
        (str(ROOT / "domains" / "finance"), "."),
        ("../../domains/finance", "tests/acceptance"),
        ("finance", "tests/acceptance"),  # a name is looked up in the parents too
    ],
)
def test_domain_as_a_path(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, domain: str, cwd: str
) -> None:
    monkeypatch.chdir(ROOT / cwd)
    text = "合同金额为¥12,345.60（壹万贰仟元整），该基金近一年收益率为5.2%。"
    result = run_cli("check", "--domain", domain, "--format", "json", text)
    doc = json.loads(result.out)
    assert (result.code, doc["pack"], doc["verdict"]) == (1, "finance", "retry")
    assert [f["rule"] for f in doc["findings"]] == ["amount-upper-and-lower", "yield-disclaimer"]


def _not_utf8(tmp_path: Path) -> Path:
    path = tmp_path / "gbk.txt"
    path.write_bytes("保本保息".encode("gbk"))
    return path


def _a_directory(tmp_path: Path) -> Path:
    return tmp_path


def _missing(tmp_path: Path) -> Path:
    return tmp_path / "nowhere.txt"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_missing, "no such file"),
        (_a_directory, "is a directory, not a file"),
        (_not_utf8, "not UTF-8 text (byte 0 is 0xb1)"),
    ],
)
def test_an_unreadable_file_is_a_usage_error_not_a_crash(
    run_cli: RunCli, tmp_path: Path, make: Any, said: str
) -> None:
    path = make(tmp_path)
    result = run_cli("check", "--domain", "finance", "--file", str(path))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"charter check: --file {path}: {said}\n"


@pytest.mark.parametrize(
    ("domain", "text", "rule", "evidence", "fixed"),
    [
        ("ecommerce", "售价１２３元，包邮。", "price-format", "１２３元", "售价123.00元，包邮。"),
        ("ecommerce", "现价￥１２３。", "price-format", "￥１２３", "现价￥123.00。"),
        ("ecommerce", "保您１００％满意。", "no-absolute-terms", "１００％", None),
        (
            "finance",
            "２０２４年５月１日到账。",
            "date-format",
            "２０２４年５月１日",
            "2024-05-01到账。",
        ),
        (
            "finance",
            "该产品年化３.５％。",
            "yield-disclaimer",
            "３.５％",
            "该产品年化３.５％。（历史业绩不预示未来表现）",  # as for 3.5%
        ),
    ],
)
def test_full_width_text_is_read_like_ascii(
    run_cli: RunCli, domain: str, text: str, rule: str, evidence: str, fixed: str | None
) -> None:
    result = run_cli("check", "--domain", domain, "--format", "json", text)
    doc = json.loads(result.out)
    found = {f["rule"]: f["evidence"] for f in doc["findings"]}
    assert found[rule] == [evidence]
    assert doc["fixed_text"] == fixed


@pytest.mark.parametrize(
    "text",
    [
        "该指数累计涨幅1,100%。",
        "该指数累计涨幅1100%。",
        "年化0.100%。",
        "跌幅-100%。",
        "涨幅2100％。",
    ],
)
def test_a_number_that_merely_ends_in_100_is_no_absolute_term(run_cli: RunCli, text: str) -> None:
    result = run_cli("check", "--domain", "ecommerce", "--format", "json", text)
    doc = json.loads(result.out)
    assert (result.code, doc["verdict"], doc["findings"]) == (0, "pass", [])


@pytest.mark.parametrize(
    ("text", "evidence", "fixed"),
    [
        ("赔付3块5。", "3块5", "赔付3.50元。"),
        ("单价3元5角。", "3元5角", "单价3.50元。"),
        ("赔付3块5毛。", "3块5毛", "赔付3.50元。"),
    ],
)
def test_a_spoken_jiao_is_part_of_the_amount(
    run_cli: RunCli, text: str, evidence: str, fixed: str
) -> None:
    result = run_cli("check", "--domain", "ecommerce", "--format", "json", text)
    doc = json.loads(result.out)
    found = {f["rule"]: f["evidence"] for f in doc["findings"]}
    assert (found, doc["verdict"], doc["fixed_text"]) == (
        {"price-format": [evidence]},
        "fixed",
        fixed,
    )


@pytest.mark.parametrize("command", ["check", "understand"])
def test_the_pack_s_warnings_are_counted_not_listed_on_every_call(
    run_cli: RunCli, tmp_path: Path, command: str
) -> None:
    # issue 32: every call printed the pack's whole warning list before its answer
    import shutil

    root = tmp_path / "telecom"
    shutil.copytree(ROOT / "tests/fixtures/goals/telecom", root)
    goals = root / "goals.yaml"
    text = goals.read_text(encoding="utf-8")
    goals.write_text(
        text.replace('["话费", "余额"]\n', '["话费", "余额"]\n    examples: [这个月花了多少]\n', 1),
        encoding="utf-8",
    )
    result = run_cli(command, "好的", "--domain", str(root))
    assert (result.code, result.err) == (
        0,
        f"charter {command}: 1 warning in the pack (charter validate lists them)\n",
    )
    listed = run_cli("validate", str(root))
    assert "CH380" in listed.out + listed.err


def test_explain_shows_the_faq_s_best_entries_for_the_input(run_cli: RunCli) -> None:
    # issue 32: the FAQ's best candidate and score were shown nowhere (min_score untunable);
    # BM25 scores are the same on every machine
    args = ("check", "--domain", "finance", "--explain", "--input", "转账要手续费吗", "好的")
    result = run_cli(*args)
    assert result.out.splitlines()[-3:] == [
        "faq for the input (answers from 0.35, before the intents from 0.90):",
        "  1.000  transfer-fee: 转账手续费是多少？",
        "  0.306  transfer-limit: 转账限额是多少？",
    ]
    doc = json.loads(run_cli(*args, "--format", "json").out)
    assert [(c["id"], c["score"]) for c in doc["faq"]["candidates"]] == [
        ("transfer-fee", 1.0),
        ("transfer-limit", 0.306),
    ]
