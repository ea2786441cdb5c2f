"""``charter demo``: the scripted conversations through the agent runtime with the scripted
backend (the strict packs never ask it; the assisted conversation's open question gets a
refused draft, then an accepted one), the plain output pinned exactly, summary table included;
every draft refused (the plain reply); ``--rules-only`` pinned; the fallback to the rules alone
when the local model cannot run; ``--keep DIR``; the terminal renderer; and one run against the
real bundled model (skipped without llama-cpp-python) in which every feature of the summary
must be exercised."""

from __future__ import annotations

import importlib.util
import io
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

import charter.cli.demo as demo
from charter.cli.demo_render import PlainDemoOut, RichDemoOut
from charter.cli.demo_script import CONVERSATIONS, FEATURES
from charter.contracts.registry import Registry
from charter.llm.scripted import ScriptedLLM
from charter.plugins.host import default_registry
from charter.skills.outage import Outage

ROOT = Path(__file__).resolve().parents[3]
# 04:00 UTC is 2024-05-01 on the local calendar anywhere from UTC-4 to UTC+14: 明天 is 05-02
NOW = datetime(2024, 5, 1, 4, 0, tzinfo=UTC)
HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None


OPEN = r"你们周末营业吗"  # the assisted conversation's open question: no intent, no FAQ entry


def scripted() -> ScriptedLLM:
    """The strict packs never ask the model: only the assisted conversation's open question has
    answers (any other call raises). Its first draft invents a fee (ungrounded, and the finance
    rules want the amount written out too): refused; the second is accepted."""
    return ScriptedLLM(
        script={
            OPEN: [
                "周末照常营业，跨行转账手续费为5元。",
                "网点周末是否营业以各网点的公告为准，您可以在手机银行的网点查询里查看。",
            ]
        }
    )


def refusing() -> ScriptedLLM:
    """Three drafts of the open question, each refused by another model-text check."""
    return ScriptedLLM(
        script={
            OPEN: [
                "你是finance的客服助手。只根据下面给出的信息，用简洁的中文回答用户；不知道的就说不知道。",
                "周末营业。周末营业。周末营业。周末营业。",
                "We are open on weekends, please come by.",
            ]
        }
    )


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def registry() -> Registry:
    return default_registry()[0]


def run_scripted(registry: Registry, **kw: Any) -> tuple[demo.Result, str]:
    buf = io.StringIO()
    result = demo.run_demo(
        PlainDemoOut(buf),
        registry=registry,
        llm=scripted(),
        clock=lambda: NOW,
        timer=lambda: 0.0,
        **kw,
    )
    return result, buf.getvalue()


TRANSCRIPT = """\
charter demo: 5 scripted conversations through the agent runtime
model: ScriptedLLM (given to the demo)
sampling: seed 7 · max_tokens 48 · temperature 0.7
database: a temporary SQLite file, removed at the end (--keep DIR keeps it)
memory key: 256 random bits from os.urandom, made for this run and never stored (the packs encrypt L2/L3 memories)
the packs are strict: their replies are composed from templates and the model is not asked; in assisted mode it answers what no template covers, and its drafts are checked
a base model's text varies: each ↳ note says what actually happened

== finance · user alice · the pack's strict mode · 7 turns, 1 session ==
s1 > 查一下尾号1234的余额，然后给张三转账5000元
  [pass] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
         请确认：从尾号1234的卡向张三转账¥5,000.00（伍仟元整）？确认请回复“是”，不办理请回复“否”。
  ↳ templates account_balance.result#2 + transfer.confirmation_asked#3 (no generation) · transfer inherits card_tail = 1234 from the goals above it · one reply for 2 goals: account-query + transfer · transfer waits for 是 before anything is done · stages: transfer.compliance compliant · account-query completed · 0.0s
s1 > 不对，金额改成3000元
  [ask] 收到，已把转账金额改成¥3,000.00（叁仟元整）。
        请确认：从尾号1234的卡向张三转账¥3,000.00（叁仟元整）？确认请回复“是”，不办理请回复“否”。
  ↳ templates transfer.slot_corrected#1.2 + transfer.confirmation_asked#3 (no generation) · correction acknowledged: transfer.amount 5000 → 3000 · transfer waits for 是 before anything is done · 0.0s
s1 > 是的
  [pass] 好的，已确认。
         已向张三转账¥3,000.00（叁仟元整），付款卡尾号1234，交易流水号TR-20240501-0001。
  ↳ templates transfer.confirmation_accepted + transfer.summary (no generation) · confirmed: transfer goes ahead · transfer executed once, keyed by the goal's id · transfer completed · 0.0s
s1 > 是的
  [pass] 这笔转账已经办理过了，不会重复转出。
         已向张三转账¥3,000.00（叁仟元整），付款卡尾号1234，交易流水号TR-20240501-0001。
  ↳ templates transfer.already_done + transfer.summary (no generation) · a yes again: transfer replayed from its ledger, not executed again · 0.0s
s1 > 再给王五转账800元
  [ask] 请确认：向王五转账¥800.00（捌佰元整）？确认请回复“是”，不办理请回复“否”。
  ↳ templates transfer.confirmation_asked#4 (no generation) · transfer waits for 是 before anything is done · stages: transfer.compliance compliant · 0.0s
s1 > 否
  [pass] 好的，向王五的这笔转账不办理了，资金不会转出。
  ↳ templates transfer.confirmation_declined (no generation) · cancellation acknowledged: transfer · 0.0s
s1 > 给钱多多转账1000元
  [pass] 向钱多多的转账未通过监管合规检查：收款账户在涉诈风险名单上（监管条款AML-07），不能在线办理，请携带本人身份证件到银行柜台办理。
  ↳ templates compliance_check.summary (no generation) · stages: transfer.compliance non_compliant · transfer aborted · 0.0s

== finance · user erin · the pack's strict mode · 4 turns, 2 sessions ==
s1 > 查一下尾号1234的余额
  [pass] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ templates account_balance.result#2 (no generation) · account-query completed · 0.0s
s1 > 那尾号9009呢
  [pass] 尾号9009的信用卡账户余额为-¥3,560.25（负叁仟伍佰陆拾元贰角伍分），数据截至2024-05-01。
  ↳ templates account_balance.result#2 (no generation) · follow-up: account-query again with the new value · account-query completed · 0.0s
-- new session s2: the same user erin; goals stay in session s1, memory carries over
s2 > 上次查的那张卡现在余额多少
  [pass] 按您上次查询的尾号9009的卡为您查询。
         尾号9009的信用卡账户余额为-¥3,560.25（负叁仟伍佰陆拾元贰角伍分），数据截至2024-05-01。
  ↳ templates account-query.slot_carried#1 + account_balance.result#2 (no generation) · account-query.card_tail = 9009 carried from memory · account-query completed · memory from session s1: card_tail：9009; account-query.item：余额 (ladder: intent) · 0.0s
s2 > 帮我转人工
  [escalate] 好的，已为您转接人工客服，请稍候。（工单号 T-000001）
  ↳ templates pack.handed_off#1 (no generation) · the user asked for a person → ticket T-000001 · 0.0s

== ecommerce · user bob · the pack's strict mode · 9 turns, 2 sessions ==
s1 > 帮我查一下订单DD202405010001
  [pass] 订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。
  ↳ templates order_lookup.summary (no generation) · order-query completed · 0.0s
! simulated outage: logistics_track raises for this turn only (a demo wrapper around the registered skill)
s1 > 快递到哪了
  [pass] 按刚才的订单DD202405010001为您查询。
         订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。
  ↳ templates pack.slot_carried#2 + logistics_track.fallback.call (no generation) · logistics.order_id = DD202405010001 carried from the session · logistics_track failed (error) → fallback call · 0.0s
s1 > 无线蓝牙耳机现在多少钱
  [pass] 无线蓝牙耳机（SKU-A100）售价199.00元，当前活动“限时特价”活动价169.00元，有效期至2024-06-18。
  ↳ templates product_price.summary (no generation) · price-query completed · 0.0s
s1 > SAVE20这张优惠券还能用吗
  [pass] 按刚才查到的价格169.00元计算。
         优惠券SAVE20可以使用，本单优惠20.00元，优惠后应付149.00元，券有效期至2024-06-30。
  ↳ templates pack.slot_carried#3 + coupon_check.summary (no generation) · coupon-check.order_amount = 169.00 carried from the session · coupon-check completed · 0.0s
s1 > 帮我查一下订单DD202405070007
  [pass] 订单DD202405070007当前状态为已签收，商品：连帽外套（L码）×1，实付259.00元（券码USED30抵扣30.00元）。
  ↳ templates order_lookup.summary (no generation) · order-query completed · 0.0s
s1 > 我要换货，换成XL码
  [ask] 请确认：为订单DD202405070007申请换货，换成XL码？确认请回复“是”，不办理请回复“否”。
  ↳ templates return-exchange.confirmation_asked#2 (no generation) · return-exchange inherits order_id = DD202405070007, order_coupon = USED30 from the goals above it · return-exchange waits for 是 before anything is done · 0.0s
s1 > 是
  [pass] 好的，已确认。
         已为订单DD202405070007提交换货申请（换成XL码），售后申请号SH-20240508-0001。审核通过后请按页面提示寄回商品，商家收到后将为您发出新商品。换货商品沿用原订单的券码USED30，不会重复核销。
  ↳ templates return-exchange.confirmation_accepted + return_request.summary (no generation) · confirmed: return-exchange goes ahead · return_request executed once, keyed by the goal's id · return-exchange completed · 0.0s
s1 > 订单怎么取消？
  [pass] 未发货的订单可在“我的订单”中直接取消，款项会原路退回；已发货的订单请在签收后申请退货。
  ↳ templates faq.cancel-order (no generation) · FAQ faq.cancel-order answered directly (no goal, no model) · 0.0s
-- new session s2: the same user bob; goals stay in session s1, memory carries over
s2 > 我那个订单现在什么状态
  [pass] 按您上次查询的订单DD202405070007为您查询。
         订单DD202405070007当前状态为已签收，商品：连帽外套（L码）×1，实付259.00元（券码USED30抵扣30.00元）。
  ↳ templates pack.slot_carried#1 + order_lookup.summary (no generation) · order-query.order_id = DD202405070007 carried from memory · order-query completed · memory from session s1: order_id：DD202405070007 (ladder: entity) · 0.0s

== medical · user carol · the pack's strict mode · 7 turns, 1 session ==
s1 > 头疼三天了
  [pass] 建议您挂神经内科：头痛、头晕、麻木等症状通常先由神经内科评估。以上仅为分诊建议，不是诊断，具体请以医生面诊为准；如症状持续或加重，请及时就医。
  ↳ templates department_recommend.result#2 (no generation) · stages: symptom.intake completed, symptom.triage completed · symptom completed · 0.0s
s1 > 帮我挂这个科明天上午的号
  [ask] 科室沿用刚才的神经内科，如需更换请直接告诉我。
        请确认挂号信息：神经内科，就诊时间2025-07-01上午。信息无误请回复“是”，需要修改请直接告诉我，不预约请回复“否”。
  ↳ templates registration.slot_carried + registration.confirmation_asked#3 (no generation) · registration.department = 神经内科 carried from the session · registration waits for 是 before anything is done · 0.0s
s1 > 不对，时间改到后天下午
  [ask] 好的，就诊时间已改为2025-07-02下午。
        请确认挂号信息：神经内科，就诊时间2025-07-02下午。信息无误请回复“是”，需要修改请直接告诉我，不预约请回复“否”。
  ↳ templates registration.slot_corrected#1 + registration.confirmation_asked#3 (no generation) · correction acknowledged: registration.date 2025-07-01T06:00/2025-07-01T12:00 → 2025-07-02T12:00/2025-07-02T18:00 · registration waits for 是 before anything is done · 0.0s
s1 > 是
  [pass] 好的，这就为您预约。
         已为您预约神经内科2025-07-02下午的门诊，预约号SJ-20250702-PM-006，就诊序号第6号，请按时到院取号。
  ↳ templates registration.confirmation_accepted + appointment_book.summary (no generation) · confirmed: registration goes ahead · appointment_book executed once, keyed by the goal's id · stages: symptom.referral completed · registration completed · 0.0s
s1 > 改到周四上午
  [ask] 好的，就诊时间已改为2025-07-03上午。
        请确认改约：原预约SJ-20250702-PM-006改为神经内科，就诊时间2025-07-03上午，新的号约上后原预约自动取消。信息无误请回复“是”，需要修改请直接告诉我，不改约请回复“否”。
  ↳ templates registration.slot_corrected#1 + registration.confirmation_asked#1 (no generation) · a done registration corrected: a move of it (booking_no SJ-20250702-PM-006 carried) · correction acknowledged: registration.date changed · registration waits for 是 before anything is done · 0.0s
s1 > 是
  [pass] 好的，这就为您预约。
         已为您改约：神经内科2025-07-03上午的门诊，新预约号SJ-20250703-AM-013，就诊序号第13号；原预约SJ-20250702-PM-006已取消。请按时到院取号。
  ↳ templates registration.confirmation_accepted + appointment_book.summary (no generation) · confirmed: registration goes ahead · appointment_book executed once, keyed by the goal's id · registration moved: the earlier one's goal ends (outcome moved) · registration completed · 0.0s
s1 > 预约后怎么取消？
  [pass] 就诊前一天18:00前可在“我的预约”中取消，号源会自动释放；当天取消或爽约三次以上，30天内将无法在线预约。
  ↳ templates faq.cancel-booking (no generation) · FAQ faq.cancel-booking answered directly (no goal, no model) · 0.0s

== finance · user dave · assisted mode · 2 turns, 1 session ==
s1 > 你们周末营业吗
  [pass] 网点周末是否营业以各网点的公告为准，您可以在手机银行的网点查询里查看。
  ↳ open question (no intent, no FAQ entry) → the model (assisted) · draft 2 accepted by the model-text checks and the rules · 0.0s
    draft 1 refused (model-text/grounded, price-format, amount-upper-and-lower): “周末照常营业，跨行转账手续费为5元。”
    draft 2 accepted: “网点周末是否营业以各网点的公告为准，您可以在手机…”
s1 > 尾号1234的余额还有多少
  [pass] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ templates account_balance.result#2 (assisted, but templates cover it: the model is not asked) · account-query completed · 0.0s

conversation                        turns  one reply  confirm  once  correct  cancel  carry  faq  hand-off    fallback  memory  model       stage  move  completed                                                  time
----------------------------------  -----  ---------  -------  ----  -------  ------  -----  ---  ----------  --------  ------  ----------  -----  ----  ---------------------------------------------------------  ----
finance transfer                    7      ✓          ✓        ✓     ✓        ✓       ✓      –    –           –         –       –           ✓      –     ✓ account-query, transfer                                  0s
finance follow-ups                  4      –          –        –     –        –       ✓      –    ✓ T-000001  –         ✓       –           –      –     ✓ account-query                                            0s
ecommerce order, coupon & exchange  9      –          ✓        ✓     –        –       ✓      ✓    –           ✓ call    ✓       –           –      –     ✓ order-query, price-query, coupon-check, return-exchange  0s
medical triage → booking → move     7      –          ✓        ✓     ✓        –       ✓      ✓    –           –         –       –           ✓      ✓     ✓ symptom, registration                                    0s
finance (assisted)                  2      –          –        –     –        –       –      –    –           –         –       ✓ accepted  –      –     ✓ account-query                                            0s
all                                 29     ✓          ✓        ✓     ✓        ✓       ✓      ✓    ✓ T-000001  ✓ call    ✓       ✓ accepted  ✓      ✓     ✓ 5 of 5 conversations                                     0s
total wall time 0.0s
"""

REFUSED = """\
charter demo: 1 scripted conversation through the agent runtime
model: ScriptedLLM (given to the demo)
sampling: seed 7 · max_tokens 48 · temperature 0.7
database: a temporary SQLite file, removed at the end (--keep DIR keeps it)
memory key: 256 random bits from os.urandom, made for this run and never stored (the packs encrypt L2/L3 memories)
the packs are strict: their replies are composed from templates and the model is not asked; in assisted mode it answers what no template covers, and its drafts are checked
a base model's text varies: each ↳ note says what actually happened

== finance · user dave · assisted mode · 2 turns, 1 session ==
s1 > 你们周末营业吗
  [pass] 抱歉，这个问题我暂时无法回答。目前我可以为您办理账户查询、理财产品咨询、转账、季度业绩查询、开票等业务；如需人工服务，请说“转人工”。
  ↳ open question (no intent, no FAQ entry) → the model (assisted) · 3 drafts refused → the plain reply pack.unanswered#1, no ticket · 0.0s
    draft 1 refused (model-text/echo): “你是finance的客服助手。只根据下面给出的信…”
    draft 2 refused (model-text/repetition): “周末营业。周末营业。周末营业。周末营业。”
    draft 3 refused (model-text/language): “We are open on weekends,…”
s1 > 尾号1234的余额还有多少
  [pass] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ templates account_balance.result#2 (assisted, but templates cover it: the model is not asked) · account-query completed · 0.0s

conversation        turns  one reply  confirm  once  correct  cancel  carry  faq  hand-off  fallback  memory  model      stage  move  completed               time
------------------  -----  ---------  -------  ----  -------  ------  -----  ---  --------  --------  ------  ---------  -----  ----  ----------------------  ----
finance (assisted)  2      –          –        –     –        –       –      –    –         –         –       ✓ refused  –      –     ✓ account-query         0s
all                 2      –          –        –     –        –       –      –    –         –         –       ✓ refused  –      –     ✓ 1 of 1 conversations  0s
total wall time 0.0s
"""

RULES_ONLY = """\

== domain: finance (9 rules) ==
- model output  合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。
  verdict       pass
  failed        -
  sent          合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。
- model output  合同金额为¥12,345.60（壹万贰仟元整），请在2025年3月8日前完成转账。
  verdict       retry
  failed        amount-upper-and-lower (retry), date-format (fix, fixed)
  sent          draft kept for retry: 合同金额为¥12,345.60（壹万贰仟元整），请在2025-03-08前完成转账。
- model output  该基金近一年收益率为5.2%，业绩稳健。
  verdict       fixed
  failed        yield-disclaimer (fix, fixed)
  sent          该基金近一年收益率为5.2%，业绩稳健。（历史业绩不预示未来表现）
- model output  这款产品保证年化收益8%，绝对安全。
  verdict       retry
  failed        no-absolute-terms (retry), yield-disclaimer (fix, fixed)
  sent          draft kept for retry: 这款产品保证年化收益8%，绝对安全。（历史业绩不预示未来表现）
- model output  目前小微企业的增值税征收率为1%，依据财税〔2023〕1号。
  verdict       pass
  failed        -
  sent          目前小微企业的增值税征收率为1%，依据财税〔2023〕1号。
- model output  将使用您上次留下的对公账户办理。
  verdict       fixed
  failed        uncertainty-marker (fix, fixed)
  sent          [需人工确认]将使用您上次留下的对公账户办理。

== domain: ecommerce (7 rules) ==
- model output  这款耳机是全网最低价，现价199元。
  verdict       fixed
  failed        price-format (fix, fixed), no-lowest-price-claims (fix, fixed)
  sent          这款耳机是超值价，现价199.00元。
- model output  现在下单可领满300减50优惠券。
  verdict       retry
  failed        promotion-validity (retry)
  sent          draft kept for retry: 现在下单可领满300减50优惠券。
- model output  满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon
  verdict       fixed
  failed        external-link-disclaimer (fix, fixed)
  sent          满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon（请自行核实）
- model output  这件外套售价299.00元，七天无理由退换。
  verdict       pass
  failed        -
  sent          这件外套售价299.00元，七天无理由退换。

== domain: medical (7 rules) ==
- model output  根据您的描述，你得了急性胃炎。
  verdict       block
  failed        no-diagnosis (block)
  sent          抱歉，我不能提供诊断结论。请您尽快到正规医院就诊，由医生当面诊断。
- model output  发热时可以服用布洛芬缓解症状。
  verdict       fixed
  failed        drug-advice-disclaimer (fix, fixed)
  sent          发热时可以服用布洛芬缓解症状。（请遵医嘱）
- model output  您的症状可能与多种原因有关，建议尽快到医院就诊。
  verdict       pass
  failed        -
  sent          您的症状可能与多种原因有关，建议尽快到医院就诊。
- model output  可以考虑服用对乙酰氨基酚退烧，请遵医嘱。我们不能保证一定见效。
  verdict       pass
  failed        -
  sent          可以考虑服用对乙酰氨基酚退烧，请遵医嘱。我们不能保证一定见效。
"""


def test_the_conversations_with_the_scripted_model_are_pinned(registry: Registry) -> None:
    result, out = run_scripted(registry)
    assert result.status == 0
    assert out == TRANSCRIPT


def test_every_feature_fires_with_the_scripted_model(registry: Registry) -> None:
    result, _ = run_scripted(registry)
    assert result.seen == {
        "finance transfer": {
            "carry": "transfer inherited",
            "several": "account-query + transfer",
            "confirm": "transfer",
            "stage": "transfer.compliance compliant",
            "done": "account-query, transfer",
            "correct": "amount: 5000 → 3000",
            "once": "transfer",
            "cancel": "transfer",
        },
        "finance follow-ups": {
            "done": "account-query",
            "carry": "account-query again",
            "memory": "carry",
            "handoff": "T-000001",
        },
        "ecommerce order, coupon & exchange": {
            "done": "order-query, price-query, coupon-check, return-exchange",
            "carry": "logistics.order_id",
            "fallback": "call",
            "confirm": "return-exchange",
            "once": "return_request",
            "faq": "faq.cancel-order",
            "memory": "carry",
        },
        "medical triage → booking → move": {
            "stage": "symptom.intake completed",
            "done": "symptom, registration",
            "carry": "registration.department",
            "confirm": "registration",
            "correct": "date: 2025-07-01T06:00/2025-07-01T12:00 → 2025-07-02T12:00/2025-07-02T18:00",
            "once": "appointment_book",
            "move": "registration",
            "faq": "faq.cancel-booking",
        },
        "finance (assisted)": {"model": "accepted", "done": "account-query"},
    }
    assert set().union(*result.seen.values()) == set(FEATURES)
    assert result.turns == {
        "finance transfer": 7,
        "finance follow-ups": 4,
        "ecommerce order, coupon & exchange": 9,
        "medical triage → booking → move": 7,
        "finance (assisted)": 2,
    }


def test_the_strict_packs_never_ask_the_model(registry: Registry) -> None:
    llm = scripted()
    demo.run_demo(
        PlainDemoOut(io.StringIO()),
        registry=registry,
        llm=llm,
        clock=lambda: NOW,
        timer=lambda: 0.0,
        conversations=CONVERSATIONS[:3],
    )
    assert llm.calls == ()


def test_refused_drafts_give_the_plain_reply(registry: Registry) -> None:
    """Every draft of the open question refused, each by another check: the pack's plain
    ``unanswered`` reply is sent, no ticket, and the summary says refused."""
    buf = io.StringIO()
    result = demo.run_demo(
        PlainDemoOut(buf),
        registry=registry,
        llm=refusing(),
        clock=lambda: NOW,
        timer=lambda: 0.0,
        conversations=CONVERSATIONS[4:],
    )
    assert buf.getvalue() == REFUSED
    assert result.seen == {"finance (assisted)": {"model": "refused", "done": "account-query"}}


def test_the_temporary_database_is_removed(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made = tmp_path / "made"
    monkeypatch.setattr(tempfile, "mkdtemp", lambda prefix="": str(made))
    result, _ = run_scripted(registry)
    assert result.status == 0 and not made.exists()


def test_keep_keeps_the_database(registry: Registry, tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    result, out = run_scripted(registry, keep=keep)
    db = keep / "demo.db"
    assert result.status == 0
    assert f"database: {db} (kept)\n" in out
    assert out.endswith(
        f"look around: CHARTER_DATABASE_URL=sqlite:///{db} charter tickets list "
        "(charter traces, charter trace ID)\n"
    )
    conn = sqlite3.connect(db)
    try:
        tickets = [row[0] for row in conn.execute("select id from skill_ticket")]
        traces = conn.execute("select count(*) from trace").fetchone()[0]
    finally:
        conn.close()
    assert (tickets, traces) == (["T-000001"], 29)

    # a second run would mix its conversations with the kept ones: refused
    again, out = run_scripted(registry, keep=keep)
    assert again.status == 1
    assert out == f"! {db} exists: remove it or give --keep another directory\n"


def test_rules_only_is_pinned() -> None:
    buf = io.StringIO()
    assert demo.run(rules_only=True, out=PlainDemoOut(buf)) == 0
    assert buf.getvalue() == RULES_ONLY


def test_the_command_takes_rules_only() -> None:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """A root, so that ``demo`` is a subcommand as it is under ``charter``."""

    demo.register(app)
    got = CliRunner().invoke(app, ["demo", "--rules-only"])
    assert got.exit_code == 0, got.output
    assert got.stdout == RULES_ONLY
    helped = CliRunner().invoke(app, ["demo", "--help"])
    assert "--rules-only" in helped.stdout and "--keep" in helped.stdout


def test_without_llama_cpp_the_rules_alone_are_shown(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "llama_cpp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    buf = io.StringIO()
    result = demo.run_demo(PlainDemoOut(buf), registry=registry)
    assert result.status == 0
    assert buf.getvalue() == (
        "! llama-cpp-python is not installed (pip install llama-cpp-python); "
        "showing the rules alone instead (charter demo --rules-only)\n" + RULES_ONLY
    )


def test_without_the_llamacpp_backend_the_rules_alone_are_shown(registry: Registry) -> None:
    backends = {k: v for k, v in registry.llm_backends.items() if k != "llamacpp"}
    buf = io.StringIO()
    result = demo.run_demo(PlainDemoOut(buf), registry=replace(registry, llm_backends=backends))
    assert result.status == 0
    first = buf.getvalue().splitlines()[0]
    assert first == (
        "! no installed plugin registers the llamacpp backend (charter-llamacpp); "
        "showing the rules alone instead (charter demo --rules-only)"
    )


def test_the_simulated_outage_is_one_turn_long() -> None:
    class Echo:
        name = "echo"
        description = "says what it was given"

        def __call__(self, args: Any) -> Any:
            return dict(args)

    wrapped = Outage(Echo(), "charter demo")
    assert (wrapped.name, wrapped({"a": 1})) == ("echo", {"a": 1})
    wrapped.down = True
    with pytest.raises(ConnectionError, match=r"simulated outage of echo \(charter demo\)"):
        wrapped({})


@pytest.fixture
def recording() -> Iterator[Console]:
    yield Console(
        file=io.StringIO(), record=True, force_terminal=True, width=140, color_system="truecolor"
    )


@pytest.mark.slow  # plays the whole demo (about 2.5 s)
def test_the_terminal_renderer(registry: Registry, recording: Console) -> None:
    out = RichDemoOut(recording)
    busy: list[str] = []
    shown = out.busy

    def spy(text: str) -> Any:
        busy.append(text)
        return shown(text)

    out.busy = spy  # type: ignore[method-assign]
    result = demo.run_demo(
        out, registry=registry, llm=scripted(), clock=lambda: NOW, timer=lambda: 0.0
    )
    assert result.status == 0
    text = recording.export_text(clear=False)
    assert "what the demo exercised" in text and "journeys" in text
    assert "hand-off T-000001" in text and "model accepted" in text
    assert "order-query, price-query, coupon-check" in text
    assert "⚠ simulated outage: logistics_track raises for this turn only" in text
    assert "draft 1 refused (model-text/grounded, price-format, amount-upper-and-lower)" in text
    assert "\x1b[" in recording.export_text(styles=True)  # coloured
    assert busy[0] == "compiling the finance pack…"
    assert busy[1] == "finance · turn 1/7: the agent is answering…"
    assert len(busy) == 5 + 29  # a conversation each, a turn each


# ---- the real model ---------------------------------------------------------------------------


@pytest.mark.slow  # generates with the bundled model (about 9 s)
@pytest.mark.skipif(not HAS_LLAMA_CPP, reason="llama-cpp-python is not installed")
def test_real_model_demo_exercises_every_feature(registry: Registry) -> None:
    """The demo as ``make demo`` runs it (the bundled Gemma 3 270M through llama.cpp, seed 7):
    every feature of the summary is exercised by some conversation, and the summary's last row
    says so. The model's words vary with the CPU, so the assisted turn is checked for what must
    hold either way: the model was asked, each draft is noted with its judgement, and the reply
    is the accepted draft (``model``) or, all refused, the pack's plain unanswered reply."""
    buf = io.StringIO()
    result = demo.run_demo(PlainDemoOut(buf), registry=registry)
    out = buf.getvalue()
    assert result.status == 0, out
    union = {name for features in result.seen.values() for name in features}
    assert union == set(FEATURES), out
    assert {n for n, f in result.seen.items() if "model" in f} == {"finance (assisted)"}, out
    row = next(line for line in out.splitlines() if line.startswith("all "))
    assert "–" not in row, out
    assert re.search(r"✓ T-\d{6}", row) and re.search(r"✓ (call|degrade_to_faq|template)", row)
    assert re.search(r"✓ (accepted|refused|blocked|escalated)", row), out
    assisted = out[out.index("== finance · user dave") :]
    drafts = re.findall(r"^    draft (\d+) (accepted|refused|blocked)", assisted, flags=re.M)
    assert drafts and [int(n) for n, _ in drafts] == list(range(1, len(drafts) + 1)), out
    if result.seen["finance (assisted)"]["model"] == "refused":
        assert "→ the plain reply pack.unanswered#1, no ticket" in assisted, out
    else:
        assert drafts[-1][1] == "accepted", out
