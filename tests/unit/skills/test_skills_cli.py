"""``charter skills list|show|call|status``: exact output and exit codes.

The CLI runs in-process (``charter.cli.main.main``) on a pack in a temporary directory; the
registry the CLI builds is replaced by one with fake skills, and the breakers' wall clock is
fixed, so every line printed is known."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import charter.cli.skills as skills_cli
import charter.skills.breaker as breaker_module
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic
from charter.skills.tickets import TicketStore
from tests.support.cli import Run, RunCharter

NOW = 1_714_557_600.0  # 2024-05-01T10:00:00Z


SEARCH = """\
name: policy_search
description: 检索2020-2023年国家及省级政策文件
input_schema:
  type: object
  required: [keyword]
  properties:
    keyword: {type: string, minLength: 2}
    year_range: {type: array, items: {type: integer, minimum: 2020, maximum: 2023}}
output_schema:
  type: object
  properties:
    results: {type: array}
    summary: {type: string}
messages:
  year_range: 年份范围超出能力边界，仅支持2020-2023，请调整后重试
constraints:
  - check: args.year_range[1] - args.year_range[0] <= 3
    message: 首尾年份差不得大于3
limits:
  max_results: 5
  timeout: 2s
fallback: search_fb
"""

LOOKUP = """\
name: order_lookup
description: 查询订单
input_schema: {type: object, properties: {order_id: {type: string}}}
output_schema: {type: object}
"""

FALLBACKS = """\
protocols:
  search_fb:
    - when: timeout
      do: template "查询{keyword}超时，请稍后再试"
    - when: unavailable
      do: degrade_to_faq
    - when: contract_violation
      do: handoff_human
"""

FAQ = """\
entries:
  - id: subsidy-scope
    question: 新能源补贴政策覆盖哪些年份？
    answer: 政策库覆盖2020—2023年。
"""


class Search:
    name = "policy_search"
    description = "fake"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, args: Mapping[str, Any]) -> Any:
        self.calls.append(dict(args))
        return {"results": [{"title": "关于新能源汽车补贴的通知"}], "summary": "找到1份文件"}


@dataclass
class Env:
    pack: str
    db: str
    search: Search


@pytest.fixture
def env(tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> Env:
    root = tmp_path / "policy"
    files = {
        "pack.yaml": "name: policy\nversion: 0.1.0\n",
        "skills/policy_search.yaml": SEARCH,
        "skills/order_lookup.yaml": LOOKUP,
        "fallbacks.yaml": FALLBACKS,
        "faq.yaml": FAQ,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    search = Search()
    fake = replace(registry, skills={"policy_search": search})

    def fake_registry() -> tuple[Registry, list[Diagnostic]]:
        return fake, []

    monkeypatch.setattr(skills_cli, "registry", fake_registry)
    monkeypatch.setattr(
        breaker_module,
        "time",
        SimpleNamespace(time=lambda: NOW, monotonic=time.monotonic, perf_counter=time.perf_counter),
    )
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'charter.db'}"
    TicketStore(db).dispose()  # the CLI opens only a database that exists
    return Env(str(root), db, search)


# ---- list and show ---------------------------------------------------------------------------


def test_list(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "list", "--domain", env.pack) == Run(
        0,
        "policy  order_lookup   implemented NO   fallback -  查询订单\n"
        "policy  policy_search  implemented yes  fallback search_fb  检索2020-2023年国家及省级政策文件\n",
        "",
    )


def test_list_json(charter: RunCharter, env: Env) -> None:
    got = charter("skills", "list", "--domain", env.pack, "--format", "json")
    assert (got.code, got.err) == (0, "")
    assert json.loads(got.out) == [
        {
            "pack": "policy",
            "skill": "order_lookup",
            "implemented": False,
            "fallback": None,
            "description": "查询订单",
        },
        {
            "pack": "policy",
            "skill": "policy_search",
            "implemented": True,
            "fallback": "search_fb",
            "description": "检索2020-2023年国家及省级政策文件",
        },
    ]


def test_list_unknown_domain(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "list", "--domain", "nowhere") == Run(
        1,
        "",
        "charter skills list: unknown domain 'nowhere' (a pack directory or a name under "
        "domains/)\n",
    )


SHOW = """\
skill policy_search (policy): 检索2020-2023年国家及省级政策文件
  arguments:
    keyword: string (required)
    year_range: array
  constraint: args.year_range[1] - args.year_range[0] <= 3  ->  首尾年份差不得大于3
  limits: max_results 5, timeout 2 s
  breaker: open after 3 failures or calls over 2 s, cool-down 30 s
  fallback: search_fb
    when timeout -> template "查询{keyword}超时，请稍后再试"
    when unavailable -> degrade_to_faq
    when contract_violation -> handoff_human
"""


def test_show(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "show", "policy_search", "--domain", env.pack) == Run(0, SHOW, "")
    assert charter("skills", "show", "order_lookup", "--domain", env.pack) == Run(
        0,
        "skill order_lookup (policy): 查询订单\n"
        "  arguments:\n"
        "    order_id: string\n"
        "  limits: timeout 5 s\n"
        "  breaker: open after 3 failures or calls over 2 s, cool-down 30 s\n"
        "  fallback: -\n",
        "",
    )


def test_show_unknown_skill(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "show", "weather", "--domain", env.pack) == Run(
        1,
        "",
        "charter skills show: pack policy has no skill 'weather' (it has: order_lookup, "
        "policy_search)\n",
    )


# ---- call ------------------------------------------------------------------------------------


def call(charter: RunCharter, env: Env, *more: str) -> Run:
    return charter("skills", "call", "policy_search", "--domain", env.pack, "--db", env.db, *more)


def test_call_ok(charter: RunCharter, env: Env) -> None:
    assert call(charter, env, "--args", '{"keyword": "新能源补贴"}') == Run(
        0, "policy_search: ok\n  answer: 找到1份文件\n", ""
    )
    assert env.search.calls == [{"keyword": "新能源补贴"}]


def test_call_ok_json(charter: RunCharter, env: Env) -> None:
    got = call(charter, env, "--args", '{"keyword": "新能源补贴"}', "--format", "json")
    assert (got.code, got.err) == (0, "")
    assert json.loads(got.out) == {
        "skill": "policy_search",
        "status": "ok",
        "text": "找到1份文件",
        "result": {"results": [{"title": "关于新能源汽车补贴的通知"}], "summary": "找到1份文件"},
        "failure": None,
        "fallback": None,
    }


def test_call_invalid_arguments(charter: RunCharter, env: Env) -> None:
    got = call(charter, env, "--args", '{"keyword": "电动车", "year_range": [2019, 2024]}')
    assert got == Run(
        0,
        "policy_search: invalid\n"
        "  failure: invalid_args: 2019 is less than the minimum of 2020\n"
        "  fallback search_fb:\n"
        '    · timeout -> template "查询{keyword}超时，请稍后再试": conditions do not hold\n'
        "    · unavailable -> degrade_to_faq: conditions do not hold\n"
        "    · contract_violation -> handoff_human: conditions do not hold\n"
        "  answer: 年份范围超出能力边界，仅支持2020-2023，请调整后重试\n",
        "",
    )
    assert env.search.calls == []


@pytest.mark.parametrize(
    ("inject", "context", "code", "out"),
    [
        (
            "timeout",
            "{}",
            0,
            "policy_search: failed\n"
            "  failure: timeout: timed out (injected)\n"
            "  fallback search_fb:\n"
            '    ✓ timeout -> template "查询{keyword}超时，请稍后再试": answered from the template\n'
            "  answer: 查询新能源补贴超时，请稍后再试\n",
        ),
        (
            "error",
            '{"query": "新能源补贴政策覆盖哪些年份"}',
            0,
            "policy_search: failed\n"
            "  failure: error: raised (injected)\n"
            "  fallback search_fb:\n"
            '    · timeout -> template "查询{keyword}超时，请稍后再试": conditions do not hold\n'
            "    ✓ unavailable -> degrade_to_faq: FAQ subsidy-scope (1.00)\n"
            "  answer: 政策库覆盖2020—2023年。\n",
        ),
        (
            "breaker_open",
            '{"query": "今天天气怎么样"}',
            1,
            "policy_search: failed\n"
            "  failure: breaker_open: breaker forced open (injected)\n"
            "  fallback search_fb:\n"
            '    · timeout -> template "查询{keyword}超时，请稍后再试": conditions do not hold\n'
            "    ✓ unavailable -> degrade_to_faq: FAQ miss (best 0.00 < 0.35)\n"
            "    · contract_violation -> handoff_human: conditions do not hold\n"
            "  answer: 抱歉，暂时无法完成这个请求，请稍后再试或联系人工客服。\n",
        ),
        (
            "empty_claim",
            '{"query": "新能源补贴", "user_id": "u1", "session_id": "s1"}',
            0,
            "policy_search: failed\n"
            "  failure: contract_violation: no results, but the result says '已为您找到3份相关文件'\n"
            "  fallback search_fb:\n"
            '    · timeout -> template "查询{keyword}超时，请稍后再试": conditions do not hold\n'
            "    · unavailable -> degrade_to_faq: conditions do not hold\n"
            "    ✓ contract_violation -> handoff_human: ticket T-000001\n"
            "  ticket: T-000001\n"
            "  reflect: the result claims what it does not hold\n"
            "  answer: 已为您转接人工客服，工单号 T-000001，稍后会有专人联系您。\n",
        ),
    ],
)
def test_call_inject(
    charter: RunCharter, env: Env, inject: str, context: str, code: int, out: str
) -> None:
    got = call(
        charter,
        env,
        "--args",
        '{"keyword": "新能源补贴"}',
        "--context",
        context,
        "--inject",
        inject,
    )
    assert got == Run(code, out, "")


def test_call_handoff_stores_the_ticket(charter: RunCharter, env: Env) -> None:
    context = '{"query": "新能源补贴", "user_id": "u1", "session_id": "s1", "negations": 1}'
    got = call(
        charter,
        env,
        "--args",
        '{"keyword": "新能源补贴"}',
        "--context",
        context,
        "--inject",
        "empty_claim",
    )
    assert got.code == 0
    with TicketStore(env.db) as store:
        tickets = store.list()
    assert [
        (t.id, t.queue, t.user_id, t.session_id, t.domain, t.skill, t.reason, t.summary)
        for t in tickets
    ] == [
        (
            "T-000001",
            "human",
            "u1",
            "s1",
            "policy",
            "policy_search",
            "the user said no 1 times; contract_violation: no results, but the result says "
            "'已为您找到3份相关文件'",
            "新能源补贴",
        )
    ]
    assert tickets[0].context == {
        "query": "新能源补贴",
        "args": {"keyword": "新能源补贴"},
        "failure": {
            "kind": "contract_violation",
            "detail": "no results, but the result says '已为您找到3份相关文件'",
        },
        "negations": 1,
        "conversation": [],
    }


@pytest.mark.parametrize(
    ("args", "context", "err"),
    [
        (
            "{keyword: 补贴}",
            "{}",
            "charter skills call: --args and --context take JSON objects: Expecting property "
            "name enclosed in double quotes: line 1 column 2 (char 1)\n",
        ),
        (
            "{}",
            "query=补贴",
            "charter skills call: --args and --context take JSON objects: Expecting value: "
            "line 1 column 1 (char 0)\n",
        ),
        ('["补贴"]', "{}", "charter skills call: --args and --context take JSON objects\n"),
        ("{}", '"补贴"', "charter skills call: --args and --context take JSON objects\n"),
    ],
)
def test_call_bad_json(charter: RunCharter, env: Env, args: str, context: str, err: str) -> None:
    assert call(charter, env, "--args", args, "--context", context) == Run(1, "", err)
    assert env.search.calls == []


def test_call_bad_inject(charter: RunCharter, env: Env) -> None:
    assert call(charter, env, "--args", '{"keyword": "补贴"}', "--inject", "crash") == Run(
        1,
        "",
        "charter skills call: --inject takes one of error, timeout, breaker_open, empty_claim, "
        "bad_output, not 'crash'\n",
    )


def test_call_unknown_skill(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "call", "weather", "--domain", env.pack, "--db", env.db) == Run(
        1,
        "",
        "charter skills call: pack policy has no skill 'weather' (it has: order_lookup, "
        "policy_search)\n",
    )


def test_call_without_a_database(charter: RunCharter, env: Env, tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    got = charter(
        "skills",
        "call",
        "policy_search",
        "--domain",
        env.pack,
        "--db",
        f"sqlite:///{missing}",
        "--args",
        '{"keyword": "补贴"}',
    )
    assert got == Run(
        1,
        "",
        f"charter skills call: no database at {missing} (give --db URL or set "
        "CHARTER_DATABASE_URL)\n",
    )


def test_call_needs_no_database(
    charter: RunCharter, env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --db and $CHARTER_DATABASE_URL the call keeps its tickets and breaker state in a
    temporary database of its own: it runs in a fresh folder (it said "no database at
    charter.db"), and leaves nothing behind."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.chdir(fresh)
    base = ("skills", "call", "policy_search", "--domain", env.pack)
    assert charter(*base, "--args", '{"keyword": "新能源补贴"}') == Run(
        0, "policy_search: ok\n  answer: 找到1份文件\n", ""
    )
    context = '{"query": "新能源补贴", "user_id": "u1"}'
    got = charter(
        *base, "--args", '{"keyword": "补贴"}', "--context", context, "--inject", "empty_claim"
    )
    assert got.code == 0
    assert "  ticket: T-000001 (in a temporary database: --db URL keeps it)" in got.out.splitlines()
    # every call starts afresh: three failures open no breaker that a fourth call would meet
    for _ in range(3):
        charter(*base, "--args", '{"keyword": "补贴"}', "--inject", "error")
    assert charter(*base, "--args", '{"keyword": "补贴"}').out.startswith("policy_search: ok\n")
    assert list(fresh.iterdir()) == []
    # the database the other commands read was never written
    with TicketStore(env.db) as store:
        assert store.list() == []


def test_call_uses_the_database_of_the_environment(
    charter: RunCharter, env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_DATABASE_URL", env.db)
    base = (
        "skills",
        "call",
        "policy_search",
        "--domain",
        env.pack,
        "--args",
        '{"keyword": "补贴"}',
    )
    assert charter(*base, "--inject", "error").code == 0
    assert charter("skills", "status") == Run(0, "policy_search  closed     strikes 1\n", "")


def test_call_a_skill_nothing_implements(charter: RunCharter, env: Env) -> None:
    got = charter("skills", "call", "order_lookup", "--domain", env.pack, "--db", env.db)
    assert got == Run(
        1,
        "order_lookup: failed\n"
        "  failure: error: no installed plugin implements skill 'order_lookup'\n"
        "  answer: no installed plugin implements skill 'order_lookup'\n",
        "",
    )


# ---- status ----------------------------------------------------------------------------------


def test_status_before_any_call(charter: RunCharter, env: Env) -> None:
    assert charter("skills", "status", "--db", env.db) == Run(
        0, "every breaker closed: no call has failed with this database\n", ""
    )
    got = charter("skills", "status", "--db", env.db, "--format", "json")
    assert (got.code, json.loads(got.out)) == (0, [])


def test_status_after_three_failing_calls(charter: RunCharter, env: Env) -> None:
    assert call(charter, env, "--args", '{"keyword": "补贴"}').code == 0
    # a good call on a closed breaker stores no row
    assert charter("skills", "status", "--db", env.db) == Run(
        0, "every breaker closed: no call has failed with this database\n", ""
    )
    call(charter, env, "--args", '{"keyword": "补贴"}', "--inject", "error")
    assert charter("skills", "status", "--db", env.db) == Run(
        0, "policy_search  closed     strikes 1\n", ""
    )
    for _ in range(2):
        call(charter, env, "--args", '{"keyword": "补贴"}', "--inject", "error")
    assert charter("skills", "status", "--db", env.db) == Run(
        0, "policy_search  open       strikes 3  retry in 30 s  (3 consecutive failures)\n", ""
    )
    got = charter("skills", "status", "--db", env.db, "--domain", env.pack, "--format", "json")
    assert (got.code, json.loads(got.out)) == (
        0,
        [
            {
                "skill": "policy_search",
                "state": "open",
                "strikes": 3,
                "retry_in_s": 30.0,
                "reason": "3 consecutive failures",
            }
        ],
    )
    # the next call is refused by the breaker the database keeps: the skill is not called
    before = len(env.search.calls)
    got = call(charter, env, "--args", '{"keyword": "补贴"}', "--context", '{"query": "天气"}')
    assert got.out.splitlines()[:2] == [
        "policy_search: failed",
        "  failure: breaker_open: skill 'policy_search' unavailable: circuit breaker open "
        "(retry in 30 s)",
    ]
    assert len(env.search.calls) == before


def test_call_inject_bad_output_fails_the_call(charter: RunCharter, env: Env) -> None:
    got = call(charter, env, "--args", '{"keyword": "新能源补贴"}', "--inject", "bad_output")
    # BUG: runner.py _guarded injects {"unexpected": True} for bad_output, which satisfies any
    # output schema without required keys or additionalProperties: false (this contract's), so
    # the drill answers "ok" instead of failing with contract_violation. Fix: make the injected
    # fault a contract_violation regardless of the schema (e.g. return
    # Failure("contract_violation", "output schema: bad output (injected)") directly).
    lines = got.out.splitlines()
    assert lines[0] == "policy_search: failed"
    assert lines[1].startswith("  failure: contract_violation: ")
