"""Acceptance (issue 8): ``charter health`` on a database filled by a test run reports every
metric of seed 001 §5 with the values computed by hand below, as JSON and as a table, for the
whole history and with ``--since``; ``--format html`` writes the report, which the last test
loads in a real headless browser (Debian's Chromium) and finds its charts in.

The database is filled deterministically: real agent turns of a copy of the ecommerce pack
(strict, as shipped: the templates tell every reply and the scripted model is never asked; a
clock moved by hand; two skills wrapped so a turn can make them break their output contract or
fail) give the traces, the facts the turns write and read, the goals
and the skill calls; the store APIs give what a turn does not: facts whose validity ends (one
expired by the lifecycle job, one left active past its end, one superseded), a fact read by an
operator, the reflection log and the patch uses. The copy deploys two patches and turns every
reflection trigger off, so the log holds exactly the entries written here.

A trace is stamped with the agent's clock, so the turns run on the scripted days.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from charter.agent import Agent
from charter.learn.log import Evidence, ReflectionLog
from charter.llm.scripted import ScriptedLLM
from charter.memory.facts.tables import MEMORY_FACT
from charter.memory.pipeline import Candidate, PreparedFact
from charter.memory.records import Accessor
from charter.plugins.host import default_host
from charter.traces.model import Trace, TraceStep
from charter.traces.store import TraceStore

ROOT = Path(__file__).resolve().parents[2]
KEY = base64.b64encode(bytes(range(32))).decode()
D1 = datetime(2024, 5, 1, tzinfo=UTC)
D3 = datetime(2024, 5, 3, tzinfo=UTC)
NOW = "2024-05-06T00:00:00Z"
LEARNING = """\
# 健康度测试：反思日志由测试写入，运行时的触发器全部关闭
triggers:
  skill_failures: 0
  negation: false
  entropy: null
  contradiction_turns: 0
  rejection: false
"""
PATCHES = """\
parameter_mappings:
  - id: return-exchange/kind/退掉吧
    intent: return-exchange
    phrase: 退掉吧
    set:
      kind: 退货
    learned_from: [R-000001]
calibrations:
  - id: calibration/运费险-退货险
    confused_pair: [运费险, 退货险]
    discriminator: 运费险：退货时补贴运费；退货险：保障退货本身
    learned_from: [R-000002]
"""
MAPPING, CALIBRATION = "return-exchange/kind/退掉吧", "calibration/运费险-退货险"


class Drill:
    """A registered skill that breaks its output contract (``bad``) or raises (``down``) while
    its mode says so, and answers as registered otherwise."""

    def __init__(self, skill: Any) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.mode: str | None = None

    def __call__(self, args: Mapping[str, Any]) -> Any:
        if self.mode == "down":
            raise ConnectionError(f"{self.name} is down (drill)")
        if self.mode == "bad":
            return {"results": "not a list", "summary": ""}
        return self.skill(args)


@dataclasses.dataclass
class Filled:
    db: str
    pack: Path
    facts: dict[str, str]  # name in this test -> fact id


def _pack(tmp_path: Path) -> Path:
    """domains/ecommerce copied with learning.yaml and one patch file; rulesets/ beside it so
    its ``extends`` resolve."""
    import shutil

    pack = tmp_path / "domains" / "ecommerce"
    shutil.copytree(ROOT / "domains" / "ecommerce", pack)
    (tmp_path / "rulesets").symlink_to(ROOT / "rulesets")
    (pack / "learning.yaml").write_text(LEARNING, encoding="utf-8")
    (pack / "patches").mkdir()
    (pack / "patches" / "learned.yaml").write_text(PATCHES, encoding="utf-8")
    return pack


def _fill(tmp_path: Path) -> Filled:
    pack = _pack(tmp_path)
    path = tmp_path / "charter.db"
    path.touch()
    db = f"sqlite:///{path}"
    clock = [D1]
    registry = default_host().registry
    drills = {n: Drill(registry.skills[n]) for n in ("order_lookup", "logistics_track")}
    registry = dataclasses.replace(registry, skills={**registry.skills, **drills})
    llm = ScriptedLLM([])  # any call would raise: the pack's templates tell every reply
    agent = Agent.from_pack(
        pack,
        llm=llm,
        database_url=db,
        memory_key=KEY,
        clock=lambda: clock[0],
        registry=registry,
    )
    facts: dict[str, str] = {}

    def turn(at: datetime, session: str, text: str, drill: tuple[str, str] | None = None) -> Any:
        clock[0] = at
        for d in drills.values():
            d.mode = None
        if drill is not None:
            drills[drill[0]].mode = drill[1]
        reply = agent.turn("u1", session, text)
        assert agent.parts.traces is not None
        stored = agent.parts.traces.get(reply.trace_id or "")
        assert stored is not None and stored.started_at == at
        return reply

    def told(reply: Any) -> tuple[str, str, tuple[str, ...]]:
        return reply.verdict, reply.answered_by, reply.responses

    def fact(at: datetime, user: str, key: str, value: str, memory_type: str) -> str:
        clock[0] = at
        accessor = Accessor(user, "test", use="support")
        prepared = agent.parts.pipeline.prepare(
            accessor, Candidate(key, value, memory_type=memory_type, domain="support")
        )
        assert isinstance(prepared, PreparedFact)
        return agent.parts.facts.write(accessor, prepared).id

    try:
        # ---- day 1 ---------------------------------------------------------------------------
        # an operator's preference fact of u2, read once by an operator on day 1
        facts["size"] = fact(D1 + timedelta(hours=7), "u2", "size", "XL", "preference")
        clock[0] = D1 + timedelta(hours=7, minutes=30)
        assert agent.parts.facts.get(Accessor("u2", "test", use="support"), "size") is not None
        # session state: valid 15 minutes; the second value supersedes the first, the
        # lifecycle job at 09:00 expires the second
        facts["page1"] = fact(D1 + timedelta(hours=8), "u2", "page", "第1页", "session_state")
        facts["page2"] = fact(
            D1 + timedelta(hours=8, minutes=5), "u2", "page", "第2页", "session_state"
        )
        assert agent.parts.facts.expire(D1 + timedelta(hours=9)) == 1
        # T1 s1: the order is looked up (its result told as the contract's summary), its id
        # becomes fact F1 (no memory to recall yet)
        r = turn(D1 + timedelta(hours=10), "s1", "订单号DD202405010001的订单发货了吗")
        assert told(r) == ("pass", "template", ("order_lookup.summary",))
        # T2 s1: F1 recalled in the session that wrote it
        r = turn(D1 + timedelta(hours=10, minutes=30), "s1", "订单DD202405010001发货了吗")
        assert told(r) == ("pass", "template", ("order_lookup.summary",))
        # T3 s2: F1 recalled from session s1; order_lookup breaks its contract -> the fallback
        # protocol's template
        r = turn(
            D1 + timedelta(hours=11),
            "s2",
            "订单DD202405010001发货了吗",
            ("order_lookup", "bad"),
        )
        assert told(r) == ("pass", "template", ("order_lookup.fallback.template",))
        # T4 s2: F1 from s1 again; the lookup answers, its result is told, the goal completes
        r = turn(D1 + timedelta(hours=12), "s2", "订单DD202405010001发货了吗")
        assert told(r) == ("pass", "template", ("order_lookup.summary",))
        # ---- day 3 ---------------------------------------------------------------------------
        # session state written on day 3 and never expired: active past its validity
        facts["cart"] = fact(D3 + timedelta(hours=8), "u2", "cart", "2件", "session_state")
        # T5 s3: F1 from s1; logistics_track is down -> its fallback calls order_lookup
        r = turn(
            D3 + timedelta(hours=9),
            "s3",
            "订单DD202405010001的快递到哪了",
            ("logistics_track", "down"),
        )
        assert told(r) == ("pass", "template", ("logistics_track.fallback.call",))
        # T6 s3: F1 from s1; the tracking answers
        r = turn(D3 + timedelta(hours=10), "s3", "订单DD202405010001的快递到哪了")
        assert told(r) == ("pass", "template", ("logistics_track.summary",))
        # T7 s4: F1 from s1; order_lookup is down -> a template answers, the goal stays open
        r = turn(
            D3 + timedelta(hours=11),
            "s4",
            "订单DD202405010001发货了吗",
            ("order_lookup", "down"),
        )
        assert told(r) == ("pass", "template", ("order_lookup.fallback.template",))
        assert llm.calls == ()  # no turn generated: the model never wrote a reply
        facts["order"] = agent.parts.facts.list_facts(Accessor("u1", "test", role="admin"))[0].id
    finally:
        agent.close()

    # a finance turn from another agent: counted without --pack only
    TraceStore(db).save(
        Trace(
            id="tr-finance-1",
            user_id="u9",
            session_id="f1",
            domain="finance",
            started_at=D3 + timedelta(hours=15),
            duration_ms=12.0,
            steps=(
                TraceStep("recall", 0.0, 1.0, outputs={"memories": []}),
                TraceStep(
                    "skills",
                    1.0,
                    1.0,
                    outputs={
                        "outcomes": [
                            {"goal": None, "skill": "account_balance", "status": "ok"}
                            | {"failure": None, "fallback": None}
                        ]
                    },
                ),
            ),
            reply="好的。",
            verdict="pass",
        )
    )

    # ---- the reflection log and the patch uses ---------------------------------------------
    log = ReflectionLog(db)
    try:

        def entry(at: datetime, trigger: str, pack_name: str = "ecommerce") -> str:
            said = Evidence("user_input", at, content="我要退掉")
            return log.add(
                pack=pack_name,
                trigger=trigger,
                hypothesis="用户想换货",
                evidence=[said],
                correction={"kind": "退货"} if trigger == "negation" else None,
                at=at,
                user_id="u1",
                session_id="s9",
                intent="return-exchange",
            ).id

        assert [
            entry(D1 + timedelta(hours=13), "negation"),  # R-000001: the mapping's source
            entry(D1 + timedelta(hours=14), "negation"),  # R-000002: the calibration's
            entry(D3 + timedelta(hours=11), "skill_failure"),
            entry(D3 + timedelta(hours=12), "rejection"),
            entry(D3 + timedelta(hours=12), "negation", "finance"),  # another pack
        ] == ["R-000001", "R-000002", "R-000003", "R-000004", "R-000005"]

        def use(at: datetime, patch: str, pack_name: str = "ecommerce") -> None:
            log.record_use(
                pack=pack_name,
                patch_id=patch,
                kind="mapping" if patch == MAPPING else "calibration",
                at=at,
                user_id="u1",
                session_id="s9",
            )

        use(D1 + timedelta(hours=15), MAPPING)
        use(D3 + timedelta(hours=13), MAPPING)
        use(D3 + timedelta(hours=14), MAPPING)
        use(D3 + timedelta(hours=13, minutes=30), CALIBRATION)
        use(D3 + timedelta(hours=13), "retired/patch")  # no longer deployed: not counted
        use(D3 + timedelta(hours=13), MAPPING, "finance")  # another pack's use
    finally:
        log.dispose()
    return Filled(db, pack, facts)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, charter_cache_dir: Path) -> Filled:
    """One database for the module's tests (they only read it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHARTER_CACHE_DIR", str(charter_cache_dir))
        return _fill(tmp_path_factory.mktemp("health"))


Run = Callable[..., Any]


def health(run_cli: Run, filled: Filled, *more: str) -> Any:
    return run_cli("health", "--pack", str(filled.pack), "--db", filled.db, "--now", NOW, *more)


def metrics(doc: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        m["id"]: (m["numerator"], m["denominator"], m["value"], m["mark"])
        for dim in doc["dimensions"]
        for m in dim["metrics"]
    }


# Every metric over the whole history, by hand (the scenario is in _fill):
#
# MH memory_utilisation: active facts are size (u2, read by the operator), cart (u2, never
#    read) and F1 (u1's order id, read by every recall); page1 is superseded, page2 expired
#    -> 2/3 = 66.7 % >= 65 %: pass
# MH cross_session_rate: recalls of F1 (written in s1 by T1): T2 in s1 (same session), T3 and
#    T4 in s2, T5 and T6 in s3, T7 in s4 (another) -> 5/6 = 83.3 % >= 40 %: pass
# MH decay_compliance: past their valid_until on 2024-05-06: page2 (expired by the job) and
#    cart (still active); page1 is superseded, so not counted -> 1/2 = 50 % < 100 %: warn
# RH reflection_conversion: ecommerce's reflections R1..R4 (R5 is finance's); R1 and R2 are
#    the patches' learned_from -> 2/4 = 50 % < 70 %: warn
# RH rule_reuse: the mapping is used 3 times, the calibration once (the retired patch and the
#    finance use do not count) -> 1/2 = 50 % >= 50 %: pass
# RH failure_interception: 4 uses / (4 uses + R1 behind the mapping + R2 behind the
#    calibration) -> 4/6 = 66.7 % < 85 %: warn
# SH contract_compliance: one call per turn, 7 calls; T3's broke the contract -> 6/7 = 85.7 %
#    < 100 %: warn
# SH fallback_activation: T3 (template), T5 (call order_lookup), T7 (template) -> 3/7 = 42.9 %,
#    outside 5 %-15 %: warn
# SH chain_success: goals with a fallback: T3's (completed by T4), T5's (completed by T6),
#    T7's (still active) -> 2/3 = 66.7 % < 80 %: warn
EVERY = {
    "memory_utilisation": (2, 3, 0.6667, "pass"),
    "cross_session_rate": (5, 6, 0.8333, "pass"),
    "decay_compliance": (1, 2, 0.5, "warn"),
    "reflection_conversion": (2, 4, 0.5, "warn"),
    "rule_reuse": (1, 2, 0.5, "pass"),
    "failure_interception": (4, 6, 0.6667, "warn"),
    "contract_compliance": (6, 7, 0.8571, "warn"),
    "fallback_activation": (3, 7, 0.4286, "warn"),
    "chain_success": (2, 3, 0.6667, "warn"),
}
# The days: 05-01 has T1-T4 and R1, R2: F1 recalled by T2 (same session), T3, T4 -> 2/3;
# calls T1-T4, T3's broke the contract and fell back -> 3/4 and 1/4; T3's goal completed ->
# 1/1. 05-02 has nothing. 05-03 has T5-T7 and R3, R4 (R5 is finance's): 3/3 recalls from s1;
# 3/3 calls kept the contract; T5 and T7 fell back -> 2/3; of their goals T5's completed -> 1/2.
TREND = [
    {
        "day": "2024-05-01",
        "turns": 4,
        "reflections": 2,
        "cross_session_rate": 0.6667,
        "contract_compliance": 0.75,
        "fallback_activation": 0.25,
        "chain_success": 1.0,
    },
    {
        "day": "2024-05-02",
        "turns": 0,
        "reflections": 0,
        "cross_session_rate": None,
        "contract_compliance": None,
        "fallback_activation": None,
        "chain_success": None,
    },
    {
        "day": "2024-05-03",
        "turns": 3,
        "reflections": 2,
        "cross_session_rate": 1.0,
        "contract_compliance": 1.0,
        "fallback_activation": 0.6667,
        "chain_success": 0.5,
    },
]


def test_the_facts_are_as_the_comments_say(filled: Filled) -> None:
    engine = sa.create_engine(filled.db)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(MEMORY_FACT.c.id, MEMORY_FACT.c.status, MEMORY_FACT.c.valid_until)
            ).all()
    finally:
        engine.dispose()
    by_id = {r.id: (r.status, r.valid_until) for r in rows}
    assert {name: by_id[fid] for name, fid in filled.facts.items()} == {
        "size": ("active", datetime(2025, 5, 1, 7, 0, tzinfo=UTC)),  # a preference: 365 days
        # superseded at 08:05: its validity ends then
        "page1": ("superseded", D1 + timedelta(hours=8, minutes=5)),
        "page2": ("expired", D1 + timedelta(hours=8, minutes=20)),
        "cart": ("active", D3 + timedelta(hours=8, minutes=15)),
        # the order id, an order_fact (memory.yaml slot_facts): 90 days from its last mention
        "order": ("active", D3 + timedelta(days=90, hours=11)),
    }
    assert len(rows) == 5


def test_every_metric_by_hand(run_cli: Run, filled: Filled) -> None:
    got = health(run_cli, filled, "--format", "json")
    assert (got.code, got.err) == (0, "")
    doc = json.loads(got.out)
    assert (doc["pack"], doc["since"], doc["now"]) == ("ecommerce", None, NOW)
    assert metrics(doc) == EVERY
    assert doc["marks"] == {"pass": 3, "warn": 6, "n/a": 0}
    assert [d["id"] for d in doc["dimensions"]] == ["MH", "RH", "SH"]
    assert doc["trend"] == TREND
    first = doc["dimensions"][2]["metrics"][1]
    assert first == {
        "id": "fallback_activation",
        "name": "fallback activation",
        "numerator": 3,
        "denominator": 7,
        "value": 0.4286,
        "healthy": "5%–15%",
        "threshold": {"min": 0.05, "max": 0.15},
        "mark": "warn",
        "note": "",
    }


def test_the_table(run_cli: Run, filled: Filled) -> None:
    got = run_cli("health", "--pack", str(filled.pack), "--database", filled.db, "--now", NOW)
    assert (got.code, got.err) == (0, "")
    assert got.out == (
        "Cognitive health · pack ecommerce · now 2024-05-06T00:00:00Z\n"
        "\n"
        "    metric                 value  count  healthy  mark  note\n"
        "────────────────────────────────────────────────────────────\n"
        "MH  memory utilisation     66.7%    2/3  ≥ 65%    pass\n"
        "    cross-session recall   83.3%    5/6  ≥ 40%    pass\n"
        "    decay compliance       50.0%    1/2  = 100%   warn\n"
        "\n"
        "RH  reflection conversion  50.0%    2/4  ≥ 70%    warn\n"
        "    rule reuse             50.0%    1/2  ≥ 50%    pass\n"
        "    failure interception   66.7%    4/6  ≥ 85%    warn\n"
        "\n"
        "SH  contract compliance    85.7%    6/7  = 100%   warn\n"
        "    fallback activation    42.9%    3/7  5%–15%   warn\n"
        "    chain success          66.7%    2/3  ≥ 80%    warn\n"
        "\n"
        "3 pass, 6 warn, 0 n/a\n"
    )


# --since 2024-05-03: the events of day 3 only, counted against today's state:
# MH memory_utilisation: F1 was read on day 3, size only on day 1 -> 1/3 = 33.3 %: warn
# MH cross_session_rate: T5-T7 recall F1 from s1 -> 3/3: pass
# MH decay_compliance: only cart's validity ended on or after 05-03; still active -> 0/1: warn
# RH reflection_conversion: R3, R4, neither a patch's source -> 0/2: warn
# RH rule_reuse: the mapping used twice, the calibration once -> 0/2: warn
# RH failure_interception: 3 uses, and R1, R2 are before the window -> 3/3: pass
# SH contract_compliance: T5-T7 kept their contracts -> 3/3: pass
# SH fallback_activation: T5 and T7 -> 2/3 = 66.7 %: warn
# SH chain_success: T5's goal completed, T7's is open -> 1/2: warn
SINCE = {
    "memory_utilisation": (1, 3, 0.3333, "warn"),
    "cross_session_rate": (3, 3, 1.0, "pass"),
    "decay_compliance": (0, 1, 0.0, "warn"),
    "reflection_conversion": (0, 2, 0.0, "warn"),
    "rule_reuse": (0, 2, 0.0, "warn"),
    "failure_interception": (3, 3, 1.0, "pass"),
    "contract_compliance": (3, 3, 1.0, "pass"),
    "fallback_activation": (2, 3, 0.6667, "warn"),
    "chain_success": (1, 2, 0.5, "warn"),
}


@pytest.mark.parametrize("since", ["2024-05-03", "2024-05-03T00:00:00Z", "2024-05-03T08:00+08:00"])
def test_since(run_cli: Run, filled: Filled, since: str) -> None:
    got = health(run_cli, filled, "--format", "json", "--since", since)
    assert (got.code, got.err) == (0, "")
    doc = json.loads(got.out)
    assert doc["since"] == "2024-05-03T00:00:00Z"
    assert metrics(doc) == SINCE
    assert doc["trend"] == TREND[2:]


def test_now_decides_which_validity_has_ended(run_cli: Run, filled: Filled) -> None:
    # at 08:10 on day 3 the cart (valid until 08:15) has not outlived its validity yet: only
    # page2, expired by the job, is due -> 1/1
    got = health(run_cli, filled, "--format", "json", "--now", "2024-05-03T08:10:00Z")
    assert got.code == 0
    assert metrics(json.loads(got.out))["decay_compliance"] == (1, 1, 1.0, "pass")


def test_without_a_pack(run_cli: Run, filled: Filled) -> None:
    """Every pack's turns (the finance trace adds one call that kept its contract, without a
    fallback or a goal); no deployed patches known, so reflection health is n/a."""
    got = run_cli("health", "--db", filled.db, "--now", NOW, "--format", "json")
    assert (got.code, got.err) == (0, "")
    doc = json.loads(got.out)
    note = "needs --pack (its deployed patches)"
    assert {
        m["id"]: (m["mark"], m["note"]) for d in doc["dimensions"][1:2] for m in d["metrics"]
    } == {
        "reflection_conversion": ("n/a", note),
        "rule_reuse": ("n/a", note),
        "failure_interception": ("n/a", note),
    }
    assert metrics(doc) == {
        **EVERY,
        "reflection_conversion": (0, 5, None, "n/a"),  # R1..R5, finance's too
        "rule_reuse": (0, 0, None, "n/a"),
        "failure_interception": (0, 0, None, "n/a"),
        "contract_compliance": (7, 8, 0.875, "warn"),
        "fallback_activation": (3, 8, 0.375, "warn"),
    }
    assert [(d["day"], d["turns"], d["reflections"]) for d in doc["trend"]] == [
        ("2024-05-01", 4, 2),
        ("2024-05-02", 0, 0),
        ("2024-05-03", 4, 3),
    ]


CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SERIES = ("cross_session_rate", "contract_compliance", "fallback_activation", "chain_success")
SERIES_NAMES = (
    "cross-session recall",
    "contract compliance",
    "fallback activation",
    "chain success",
)


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    """Debian's headless Chromium through its chromedriver (no Selenium Manager download, no
    network, a throwaway profile), with the console log kept."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1000,2400",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.slow  # the browser: headless Chromium
def test_the_html_report_in_a_browser(
    run_cli: Run, filled: Filled, tmp_path: Path, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    report = tmp_path / "health.html"
    got = health(run_cli, filled, "--format", "html", "--output", str(report))
    assert (got.code, got.out, got.err) == (0, f"wrote {report}\n", "")
    browser.get(report.as_uri())
    assert browser.title == "Cognitive health · ecommerce"

    def all_(css: str, within: Any = browser) -> list[Any]:
        return list(within.find_elements(By.CSS_SELECTOR, css))

    charts = all_("svg.chart")
    assert [c.get_attribute("id") for c in charts] == [
        "chart-metrics",
        "chart-trend-rates",
        "chart-trend-counts",
    ]
    for chart in charts:
        assert chart.is_displayed()
        assert chart.size["width"] > 600 and chart.size["height"] > 150, chart.size
    bars_chart, rates, counts = charts

    # a bar per metric (none is n/a here), coloured by its mark, as long as its value
    bars = all_("rect.bar", bars_chart)
    assert [(b.get_attribute("data-metric"), b.get_attribute("class")) for b in bars] == [
        (metric, f"bar {mark}") for metric, (*_, mark) in EVERY.items()
    ]
    widths = {b.get_attribute("data-metric"): b.size["width"] for b in bars}
    assert all(w > 0 for w in widths.values())
    # the same scale for every bar: 66.7 % is twice as long as 33.3 %... and 50 % as 0.5
    assert widths["memory_utilisation"] / widths["decay_compliance"] == pytest.approx(
        (2 / 3) / 0.5, rel=0.02
    )
    # a threshold line each, two for the fallback range
    assert len(all_("line.threshold", bars_chart)) == 10
    labels = [t.text for t in all_("g.metric > text", bars_chart)]
    assert labels[:2] == ["memory utilisation", "66.7% · pass"]
    assert "fallback activation" in labels and "42.9% · warn" in labels

    # the trend: a point per day with a value, four series on 05-01 and 05-03, none on 05-02
    points = all_("circle.point", rates)
    assert [(p.get_attribute("data-day"), p.get_attribute("data-series")) for p in points] == [
        (day, series) for series in SERIES for day in ("2024-05-01", "2024-05-03")
    ]
    assert all(p.is_displayed() and p.size["width"] > 0 for p in points)
    assert [float(p.get_attribute("data-value")) for p in points] == [
        0.6667,
        1.0,
        0.75,
        1.0,
        0.25,
        0.6667,
        1.0,
        0.5,
    ]
    assert len(all_("path.line", rates)) == 4
    days = [t.text for t in all_("text.day", rates)]
    assert days == ["05-01", "05-02", "05-03"]
    legend = [t.text for t in all_("g.legend text", rates)]
    assert legend == list(SERIES_NAMES)

    # turns and reflections per day
    bars = all_("rect.count", counts)
    assert [
        (b.get_attribute("data-day"), b.get_attribute("class"), b.get_attribute("data-count"))
        for b in bars
    ] == [
        ("2024-05-01", "count turns", "4"),
        ("2024-05-01", "count reflections", "2"),
        ("2024-05-02", "count turns", "0"),
        ("2024-05-02", "count reflections", "0"),
        ("2024-05-03", "count turns", "3"),
        ("2024-05-03", "count reflections", "2"),
    ]
    heights = [b.size["height"] for b in bars]
    assert heights[0] > heights[4] > heights[1] > 0 and heights[2] == heights[3] == 0

    # the table below the charts, and nothing fetched or run
    rows = all_("section#metrics tr[data-metric]")
    assert [r.get_attribute("data-metric") for r in rows] == list(EVERY)
    assert (
        browser.execute_script(
            "return document.querySelectorAll('script, link, img, iframe, object').length"
        )
        == 0
    )
    assert [e for e in browser.get_log("browser")] == []
