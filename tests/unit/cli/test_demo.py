"""``charter demo``: the scripted conversations through the agent runtime with the scripted
backend (answers chosen so that every feature fires), the plain output pinned exactly, summary
table included; ``--rules-only`` pinned; the fallback to the rules alone when the local model
cannot run; ``--keep DIR``; the terminal renderer; and one run against the real bundled model
(skipped without llama-cpp-python) in which every feature of the summary must be exercised."""

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
from charter.cli.demo_script import FEATURES
from charter.llm.scripted import ScriptedLLM
from charter.plugins import default_registry
from charter.registry import Registry

ROOT = Path(__file__).resolve().parents[3]
# 04:00 UTC is 2024-05-01 on the local calendar anywhere from UTC-4 to UTC+14: 明天 is 05-02
NOW = datetime(2024, 5, 1, 4, 0, tzinfo=UTC)
HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None


def scripted() -> ScriptedLLM:
    """Every answer the model is asked for fails the goals' deliverables ("好的。": retries,
    then a template or a ticket) except two: the order status, accepted at once, and a drug
    named without "请遵医嘱", which the medical pack repairs."""
    return ScriptedLLM(
        script={
            r"回答：订单号DD202405010001$": "您的订单DD202405010001已发货，正在运输中。",
            r"回答：布洛芬一天吃几次$": "布洛芬一般每次一片，每天不超过三次。",
        },
        default="好的。",
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


CONVERSATIONS = """\
charter demo: 3 scripted conversations through the agent runtime
model: ScriptedLLM (given to the demo)
sampling: seed 7 · max_tokens 48 · temperature 0.7
database: a temporary SQLite file, removed at the end (--keep DIR keeps it)
memory key: 256 random bits from os.urandom, made for this run and never stored (the packs encrypt L2/L3 memories)
a base model's text varies: each ↳ note says what actually happened

== finance · user alice · 6 turns, 2 sessions ==
s1 > 查一下尾号1234的余额，然后给张三转账5000元
  [retry] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ model · retry×2 → template from account_balance · goals: split: account-query + transfer · 0.0s
s1 > 不对，金额改成3000元
  [retry] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ model · retry×2 → template from account_balance · goals: corrected transfer.amount: 5000 → 3000 · 0.0s
s1 > 转账不用了
  [retry] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ model · retry×2 → template from account_balance · goals: cancelled transfer; account-query completed · memory: 1 fact(s) recalled (ladder: intent) · 0.0s
s1 > 我有5万元想买理财，有什么推荐
  [escalate] 该问题需要人工复核，已为您转接金融顾问，请稍候。（工单号 T-000001）
  ↳ model · retry×2 → escalated · ticket T-000001 · goals: new goal wealth-product (active) · 0.0s
-- new session s2: the same user alice; goals stay in session s1, memory carries over
s2 > 尾号1234的余额还有多少
  [retry] 尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ model · retry×2 → template from account_balance · goals: new goal account-query (active); account-query completed · memory from session s1: item：余额; card_tail：1234 (ladder: intent) · 0.0s
demo setup: a guess about alice is written to memory — preferred_card = 尾号1234的卡常用于还款 (inferred, confidence 0.60, below the pack's uncertainty threshold 0.72)
s2 > 尾号1234最近有哪些交易记录
  [retry] [需人工确认]尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。
  ↳ model · retry×2 → template from account_balance · template answer repaired by the rules (uncertainty marker) · low-confidence memory → 【不确定性】高 · goals: new goal account-query (active); account-query completed · memory from session s1: item：余额; card_tail：1234 (ladder: intent) · 0.0s

== ecommerce · user bob · 5 turns, 2 sessions ==
s1 > 帮我查一下订单
  [ask] 请问您的订单号是多少？可以在“我的订单”里查看。
  ↳ planner asks for a missing slot (no generation) · goals: new goal order-query (pending) · 0.0s
s1 > 订单号DD202405010001
  [pass] 您的订单DD202405010001已发货，正在运输中。
  ↳ model · first attempt · goals: filled order-query.order_id = DD202405010001; activated order-query; order-query completed · 0.0s
! simulated outage: logistics_track raises for this turn only (a demo wrapper around the registered skill)
s1 > 订单DD202405010001的快递到哪了
  [pass] 订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。
  ↳ logistics_track failed (error) → fallback call (no generation) · goals: new goal logistics (active) · memory: 1 fact(s) recalled (ladder: entity) · 0.0s
-- new session s2: the same user bob; goals stay in session s1, memory carries over
s2 > 我的订单DD202405010001发货了吗
  [retry] 订单DD202405010001当前状态为已发货，商品：无线蓝牙耳机×2，实付398.00元。
  ↳ model · retry×2 → template from order_lookup · goals: new goal order-query (active); order-query completed · memory from session s1: order_id：DD202405010001 (ladder: entity) · 0.0s
s2 > 订单DD202405010001的快递现在到哪了
  [retry] 订单DD202405010001由顺丰速运承运（运单号SF1400012345678），最新进展：2024-05-02 21:10 快件已到达【上海浦东营业点】，正在派送。
  ↳ model · retry×2 → template from logistics_track · goals: new goal logistics (active) · memory from session s1: order_id：DD202405010001 (ladder: entity) · 0.0s

== medical · user carol · 6 turns, 2 sessions ==
s1 > 头疼三天了，帮我挂个明天的神经内科号，顺便解读一下血常规报告
  [ask] 检测到您可能需要同时处理3件事：头疼症状咨询、预约2024-05-02的神经内科门诊、解读血常规报告，是否继续？（Y/N）
  ↳ planner confirms the split (no generation) · goals: split: symptom + registration + report, to confirm · 0.0s
s1 > 好的，继续
  [retry] 建议您挂全科医学科。以上仅为分诊建议，不是诊断，具体请以医生面诊为准。
  ↳ model · retry×2 → template from department_recommend · goals: activated symptom, registration, report · memory: 1 fact(s) recalled (ladder: entity) · 0.0s
s1 > 不对，时间改到后天下午
  [retry] 建议您挂全科医学科。以上仅为分诊建议，不是诊断，具体请以医生面诊为准。
  ↳ model · retry×2 → template from department_recommend · goals: corrected registration.date: 2024-05-02 → 2024-05-03T12:00/2024-05-03T18:00 · 0.0s
s1 > 帮我取消预约
  [retry] 建议您挂全科医学科。以上仅为分诊建议，不是诊断，具体请以医生面诊为准。
  ↳ model · retry×2 → template from department_recommend · goals: cancelled registration · memory: 1 fact(s) recalled (ladder: intent) · 0.0s
-- new session s2: the same user carol; goals stay in session s1, memory carries over
s2 > 头疼还没好
  [retry] 建议您挂全科医学科。以上仅为分诊建议，不是诊断，具体请以医生面诊为准。
  ↳ model · retry×2 → template from department_recommend · goals: new goal symptom (active); symptom completed · memory from session s1: duration：三天; symptoms：头疼 (ladder: intent) · 0.0s
s2 > 布洛芬一天吃几次
  [fixed] 布洛芬一般每次一片，每天不超过三次。（请遵医嘱）
  ↳ model · first attempt · repaired: drug-advice-disclaimer · goals: new goal medication (active); medication completed · 0.0s

domain     turns  memory  split/correct/cancel  repaired  retry  escalation  fallback  time
---------  -----  ------  --------------------  --------  -----  ----------  --------  ----
finance    6      ✓       ✓/✓/✓                 ✓         ✓      ✓ T-000001  –         0s
ecommerce  5      ✓       –/–/–                 –         ✓      –           ✓ call    0s
medical    6      ✓       ✓/✓/✓                 ✓         ✓      –           –         0s
all        17     ✓       ✓/✓/✓                 ✓         ✓      ✓ T-000001  ✓ call    0s
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
    assert out == CONVERSATIONS


def test_every_feature_fires_with_the_scripted_model(registry: Registry) -> None:
    result, _ = run_scripted(registry)
    assert result.seen == {
        "finance": {
            "retry": "",
            "split": "account-query + transfer",
            "correct": "amount: 5000 → 3000",
            "cancel": "transfer",
            "escalation": "T-000001",
            "memory": "s1",
            "repaired": "",
        },
        "ecommerce": {"fallback": "call", "retry": "", "memory": "s1"},
        "medical": {
            "split": "symptom + registration + report",
            "retry": "",
            "correct": "date: 2024-05-02 → 2024-05-03T12:00/2024-05-03T18:00",
            "cancel": "registration",
            "memory": "s1",
            "repaired": "drug-advice-disclaimer",
        },
    }
    assert result.turns == {"finance": 6, "ecommerce": 5, "medical": 6}


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
    assert (tickets, traces) == (["T-000001"], 17)

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

    wrapped = demo.Outage(Echo())
    assert (wrapped.name, wrapped({"a": 1})) == ("echo", {"a": 1})
    wrapped.down = True
    with pytest.raises(ConnectionError, match="simulated outage of echo"):
        wrapped({})


@pytest.fixture
def recording() -> Iterator[Console]:
    yield Console(
        file=io.StringIO(), record=True, force_terminal=True, width=140, color_system="truecolor"
    )


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
    assert "what the demo exercised" in text and "✓ T-000001" in text
    assert "⚠ simulated outage: logistics_track raises for this turn only" in text
    assert "\x1b[" in recording.export_text(styles=True)  # coloured
    assert busy[0] == "compiling the finance pack…"
    assert busy[1] == "finance · turn 1/6: the agent is answering…"
    assert len(busy) == 3 + 17  # a pack each, a turn each


# ---- the real model ---------------------------------------------------------------------------


@pytest.mark.skipif(not HAS_LLAMA_CPP, reason="llama-cpp-python is not installed")
def test_real_model_demo_exercises_every_feature(registry: Registry) -> None:
    """The demo as ``make demo`` runs it (the bundled Gemma 3 270M through llama.cpp, seed 7):
    every feature of the summary is exercised by some domain, and the summary's last row says
    so."""
    buf = io.StringIO()
    result = demo.run_demo(PlainDemoOut(buf), registry=registry)
    out = buf.getvalue()
    assert result.status == 0, out
    union = {name for features in result.seen.values() for name in features}
    assert union == set(FEATURES), out
    row = next(line for line in out.splitlines() if line.startswith("all "))
    assert "–" not in row, out
    assert re.search(r"✓ T-\d{6}", row) and re.search(r"✓ (call|degrade_to_faq|template)", row)
