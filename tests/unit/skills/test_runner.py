"""``SkillRunner.call``: the guarded call end to end — arguments refused before the skill runs,
errors, timeouts, the breaker, injected faults, the output post-checks, the fallback chain
(with its depth limit) and the call records; and a contract's ``tests:`` through
``SkillCaseRunner`` and ``run_skill_case``.

The skills are fakes registered with ``dataclasses.replace(registry, skills=...)``; the slow
one blocks on a ``threading.Event`` that the test sets when done, and the breakers run on a
fake clock, so nothing here depends on how fast the machine is."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.reflect.testing import run_skill_case
from charter.skills.breaker import BreakerRegistry
from charter.skills.cases import SkillCaseRunner
from charter.skills.fallback import NO_ANSWER, Failure, StepTrace
from charter.skills.runner import INJECTABLE, CallRecord, SkillRunner, result_text

PACK = "name: run\nversion: 0.1.0\n"

POLICY_SEARCH = """\
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
  required: [results]
  properties:
    results: {type: array}
    summary: {type: string}
messages:
  keyword.minLength: 关键词至少两个字
  year_range: 年份范围超出能力边界，仅支持2020-2023，请调整后重试
constraints:
  - check: args.year_range[1] - args.year_range[0] <= 2
    message: 首尾年份差不得大于2
limits:
  max_results: 3
  timeout: 5s
breaker:
  failures: 2
fallback: search_fb
tests:
  - name: 正常检索
    args: {keyword: 新能源补贴}
    expect: {status: ok, results: 1, message: 找到1份文件}
  - name: 年份超出能力边界
    args: {keyword: 新能源补贴, year_range: [2019, 2024]}
    expect: {status: invalid, message: 年份范围超出能力边界，仅支持2020-2023，请调整后重试}
  - name: 接口超时
    args: {keyword: 新能源补贴}
    inject: timeout
    expect: {status: failed, failure: timeout, action: template, message: 政策库响应超时，请稍后再试}
  - name: 空结果却声称找到
    args: {keyword: 新能源补贴}
    inject: empty_claim
    expect: {status: failed, failure: contract_violation, action: clarify}
  - name: 写错了的期望
    args: {keyword: 新能源补贴}
    expect: {status: failed, results: 2, failure: error, action: handoff_human}
"""

POLICY_EXPLAIN = """\
name: policy_explain
description: 解读政策文件的要点
input_schema:
  type: object
  properties:
    keyword: {type: string}
output_schema: {type: object}
fallback: explain_fb
"""

SLOW = """\
name: slow_search
description: 很慢的检索
input_schema: {type: object}
output_schema: {type: object}
limits: {timeout: 50ms}
fallback: search_fb
"""

PING = """\
name: {name}
description: 总是失败
input_schema: {{type: object}}
output_schema: {{type: object}}
fallback: {name}_fb
"""

FAQ = """\
entries:
  - id: subsidy-scope
    question: 新能源补贴政策覆盖哪些年份？
    answer: 政策库覆盖2020—2023年。
"""

FALLBACKS = """\
protocols:
  search_fb:
    - when: timeout
      do: template "政策库响应超时，请稍后再试"
    - when: unavailable
      do: degrade_to_faq
    - when: error
      do: call policy_explain
    - when: contract_violation
      do: clarify "结果异常，请换个说法"
  explain_fb:
    - when: negations >= 2
      do: handoff_human
    - when: low_confidence
      do: clarify "您想了解政策的哪一部分？"
  ping_fb:
    - when: always
      do: call pong
  pong_fb:
    - when: always
      do: call ping
"""


class FakeSkill:
    """Records every call; answers with ``result``, raises ``error``, or blocks on ``gate``."""

    def __init__(
        self,
        name: str,
        result: Any = None,
        *,
        error: Exception | None = None,
        gate: threading.Event | None = None,
    ) -> None:
        self.name = name
        self.description = name
        self.result = result
        self.error = error
        self.gate = gate
        self.calls: list[dict[str, Any]] = []

    def __call__(self, args: Mapping[str, Any]) -> Any:
        self.calls.append(dict(args))
        if self.gate is not None:
            self.gate.wait()
        if self.error is not None:
            raise self.error
        return self.result


FOUND = {"results": [{"title": "关于新能源汽车补贴的通知"}], "summary": "找到1份文件"}


@dataclass
class Skills:
    search: FakeSkill = field(default_factory=lambda: FakeSkill("policy_search", FOUND))
    explain: FakeSkill = field(
        default_factory=lambda: FakeSkill("policy_explain", {"summary": "该政策的要点是……"})
    )
    ping: FakeSkill = field(
        default_factory=lambda: FakeSkill("ping", error=RuntimeError("ping down"))
    )
    pong: FakeSkill = field(
        default_factory=lambda: FakeSkill("pong", error=RuntimeError("pong down"))
    )
    slow: FakeSkill = field(default_factory=lambda: FakeSkill("slow_search", {"summary": "迟到"}))

    def registry(self, base: Registry) -> Registry:
        return replace(
            base,
            skills={
                s.name: s for s in (self.search, self.explain, self.ping, self.pong, self.slow)
            },
        )


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runner") / "pack"
    files = {
        "pack.yaml": PACK,
        "skills/policy_search.yaml": POLICY_SEARCH,
        "skills/policy_explain.yaml": POLICY_EXPLAIN,
        "skills/ping.yaml": PING.format(name="ping"),
        "skills/pong.yaml": PING.format(name="pong"),
        "skills/slow_search.yaml": SLOW,
        "faq.yaml": FAQ,
        "fallbacks.yaml": FALLBACKS,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def skills() -> Skills:
    return Skills()


@pytest.fixture
def reg(skills: Skills, registry: Registry) -> Registry:
    return skills.registry(registry)


@pytest.fixture
def pack(pack_dir: Path, reg: Registry) -> CompiledPack:
    compiled, diags = compile_path(pack_dir, reg, cache_dir=None)
    assert compiled is not None and compiled.skills is not None, [d.headline() for d in diags]
    assert diags == []
    return compiled


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


MakeRunner = Callable[..., SkillRunner]


@pytest.fixture
def make_runner(pack: CompiledPack, reg: Registry) -> Iterator[MakeRunner]:
    made: list[SkillRunner] = []

    def make(**kwargs: Any) -> SkillRunner:
        kwargs.setdefault("breakers", BreakerRegistry(clock=FakeClock()))
        assert pack.skills is not None
        runner = SkillRunner(pack.skills, reg, pack=pack.name, **kwargs)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


@pytest.fixture
def runner(make_runner: MakeRunner) -> SkillRunner:
    return make_runner()


def summary(records: list[CallRecord]) -> list[tuple[Any, ...]]:
    """A record without its times."""
    return [(r.skill, r.status, r.failure, r.detail, r.fallback, r.depth) for r in records]


# ---- answers and refusals --------------------------------------------------------------------


def test_ok(runner: SkillRunner, skills: Skills) -> None:
    got = runner.call("policy_search", {"keyword": "新能源补贴"})
    assert (got.skill, got.status, got.text, got.result) == (
        "policy_search",
        "ok",
        "找到1份文件",
        FOUND,
    )
    assert (got.failure, got.fallback, got.reflect) == (None, None, False)
    assert skills.search.calls == [{"keyword": "新能源补贴"}]
    records = runner.records()
    assert summary(records) == [("policy_search", "ok", None, "", None, 0)]
    assert records[0].elapsed_s >= 0.0


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"results": [], "summary": "没有符合条件的政策"}, "没有符合条件的政策"),
        ({"results": [], "answer": "答案"}, "答案"),
        ({"results": [], "summary": "", "text": "正文"}, "正文"),
        ({"results": [{"t": "政策"}]}, '{"results": [{"t": "政策"}]}'),
    ],
)
def test_result_text(result: Any, text: str) -> None:
    assert result_text(result) == text


@pytest.mark.parametrize(
    ("args", "message", "detail", "field"),
    [
        ({"keyword": "补"}, "关键词至少两个字", "'补' is too short", "keyword"),
        (
            {"keyword": "电动车", "year_range": [2019, 2024]},
            "年份范围超出能力边界，仅支持2020-2023，请调整后重试",
            "2019 is less than the minimum of 2020",
            "year_range",
        ),
        (
            {"keyword": "电动车", "year_range": [2020, 2023]},
            "首尾年份差不得大于2",
            "args.year_range[1] - args.year_range[0] <= 2",
            "year_range",
        ),
    ],
)
def test_invalid_arguments_never_reach_the_skill(
    runner: SkillRunner,
    skills: Skills,
    args: dict[str, Any],
    message: str,
    detail: str,
    field: str,
) -> None:
    got = runner.call("policy_search", args)
    assert skills.search.calls == []
    # the argument refused: the agent asks for the slot it came from again
    assert (got.status, got.text, got.failure) == (
        "invalid",
        message,
        Failure("invalid_args", detail, message, field=field),
    )
    # no step of search_fb applies to refused arguments: the contract's message stands
    assert got.fallback is not None and got.fallback.action == "none"
    assert summary(runner.records()) == [
        ("policy_search", "invalid", "invalid_args", detail, None, 0)
    ]


def test_missing_required_argument(runner: SkillRunner, skills: Skills) -> None:
    got = runner.call("policy_search", {})
    assert skills.search.calls == []
    assert got.failure == Failure(
        "invalid_args",
        "'keyword' is a required property",
        "参数keyword不符合要求，请调整后重试",
        ("keyword",),
        field="keyword",
    )


def test_error_falls_back_to_the_faq(runner: SkillRunner, skills: Skills) -> None:
    skills.search.error = RuntimeError("backend down")
    got = runner.call(
        "policy_search", {"keyword": "新能源补贴"}, {"query": "新能源补贴政策覆盖哪些年份"}
    )
    assert (got.status, got.text) == ("failed", "政策库覆盖2020—2023年。")
    assert got.failure == Failure("error", "RuntimeError: backend down")
    assert got.fallback is not None
    assert (got.fallback.action, got.fallback.faq) == ("degrade_to_faq", "subsidy-scope")
    assert summary(runner.records()) == [
        ("policy_search", "failed", "error", "RuntimeError: backend down", "degrade_to_faq", 0)
    ]


def test_error_then_another_skill_answers(runner: SkillRunner, skills: Skills) -> None:
    skills.search.error = RuntimeError("backend down")
    got = runner.call("policy_search", {"keyword": "电动车", "year_range": [2020, 2021]})
    assert (got.status, got.text) == ("failed", "该政策的要点是……")
    assert got.fallback is not None
    assert got.fallback.steps == (
        StepTrace(
            'timeout -> template "政策库响应超时，请稍后再试"', False, "conditions do not hold"
        ),
        StepTrace("unavailable -> degrade_to_faq", True, "FAQ miss (best 0.00 < 0.35)"),
        StepTrace("error -> call policy_explain", True, "policy_explain answered"),
    )
    # the called skill gets only the arguments its contract declares
    assert skills.explain.calls == [{"keyword": "电动车"}]
    assert summary(runner.records()) == [
        ("policy_explain", "ok", None, "", None, 1),
        ("policy_search", "failed", "error", "RuntimeError: backend down", "call", 0),
    ]


def test_timeout(runner: SkillRunner, skills: Skills) -> None:
    gate = threading.Event()  # the skill answers only when the test is done with it
    skills.slow.gate = gate
    try:
        got = runner.call("slow_search", {})
    finally:
        gate.set()
    assert skills.slow.calls == [{}]
    assert got.failure == Failure("timeout", "no result within 0.05 s")
    assert (got.status, got.text, got.result) == ("failed", "政策库响应超时，请稍后再试", None)
    assert summary(runner.records()) == [
        ("slow_search", "failed", "timeout", "no result within 0.05 s", "template", 0)
    ]


def test_breaker_opens_and_then_the_skill_is_not_called(
    runner: SkillRunner, skills: Skills
) -> None:
    skills.search.error = RuntimeError("backend down")
    for _ in range(2):  # breaker: failures: 2
        assert runner.call("policy_search", {"keyword": "新能源补贴"}).failure == Failure(
            "error", "RuntimeError: backend down"
        )
    assert len(skills.search.calls) == 2
    got = runner.call("policy_search", {"keyword": "新能源补贴"})
    assert len(skills.search.calls) == 2
    assert got.failure == Failure(
        "breaker_open",
        "skill 'policy_search' unavailable: circuit breaker open (retry in 30 s)",
    )
    snap = runner.breakers.get("policy_search").snapshot()
    assert (snap.state, snap.strikes, snap.reason) == ("open", 2, "2 consecutive failures")


def test_refused_arguments_do_not_count_against_the_breaker(
    runner: SkillRunner, skills: Skills
) -> None:
    for _ in range(3):
        assert runner.call("policy_search", {"keyword": "补"}).status == "invalid"
    assert runner.call("policy_search", {"keyword": "新能源补贴"}).status == "ok"


def test_a_skill_no_plugin_implements(
    pack: CompiledPack, registry: Registry, skills: Skills
) -> None:
    assert pack.skills is not None
    runner = SkillRunner(pack.skills, replace(registry, skills={}))
    try:
        got = runner.call("policy_explain", {"keyword": "补贴"})
    finally:
        runner.close()
    assert got.failure == Failure("error", "no installed plugin implements skill 'policy_explain'")
    # no step of explain_fb applies to an error
    assert (got.status, got.text) == ("failed", NO_ANSWER)


# ---- the output post-checks ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "detail", "reflect"),
    [
        (
            {"results": [], "summary": "已为您找到3份文件"},
            "no results, but the result says '已为您找到3份文件'",
            True,
        ),
        ({"results": [1, 2, 3, 4]}, "4 results, the contract allows 3", False),
        ({"summary": "x"}, "output schema: result: 'results' is a required property", False),
    ],
)
def test_contract_violation(
    runner: SkillRunner, skills: Skills, result: Any, detail: str, reflect: bool
) -> None:
    skills.search.result = result
    got = runner.call("policy_search", {"keyword": "新能源补贴"})
    assert got.failure == Failure("contract_violation", detail, reflect=reflect)
    assert got.reflect is reflect
    assert (got.status, got.text, got.result) == ("failed", "结果异常，请换个说法", None)
    assert summary(runner.records()) == [
        ("policy_search", "failed", "contract_violation", detail, "clarify", 0)
    ]


# ---- injected faults -------------------------------------------------------------------------


def test_injectable() -> None:
    assert INJECTABLE == ("error", "timeout", "breaker_open", "empty_claim", "bad_output")


@pytest.mark.parametrize(
    ("inject", "failure", "called", "text"),
    [
        ("error", Failure("error", "raised (injected)"), False, "该政策的要点是……"),
        (
            "timeout",
            Failure("timeout", "timed out (injected)"),
            False,
            "政策库响应超时，请稍后再试",
        ),
        (
            "breaker_open",
            Failure("breaker_open", "breaker forced open (injected)"),
            False,
            NO_ANSWER,
        ),
        (
            "empty_claim",
            Failure(
                "contract_violation",
                "no results, but the result says '已为您找到3份相关文件'",
                reflect=True,
            ),
            True,
            "结果异常，请换个说法",
        ),
        (
            "bad_output",
            Failure("contract_violation", "output schema: bad output (injected)"),
            True,
            "结果异常，请换个说法",
        ),
    ],
)
def test_inject(
    runner: SkillRunner,
    skills: Skills,
    inject: str,
    failure: Failure,
    called: bool,
    text: str,
) -> None:
    # "电动车" matches no FAQ entry: degrade_to_faq passes on
    got = runner.call("policy_search", {"keyword": "电动车"}, inject=inject)
    assert (got.status, got.failure, got.text) == ("failed", failure, text)
    assert skills.search.calls == ([{"keyword": "电动车"}] if called else [])


def test_inject_does_not_bypass_the_argument_checks(runner: SkillRunner, skills: Skills) -> None:
    got = runner.call("policy_search", {"keyword": "补"}, inject="error")
    assert (got.status, got.text) == ("invalid", "关键词至少两个字")


def test_injected_failures_count_against_the_breaker(runner: SkillRunner, skills: Skills) -> None:
    runner.call("policy_search", {"keyword": "新能源补贴"}, inject="error")
    runner.call("policy_search", {"keyword": "新能源补贴"}, inject="timeout")
    got = runner.call("policy_search", {"keyword": "新能源补贴"})
    assert got.failure is not None and got.failure.kind == "breaker_open"
    assert skills.search.calls == []


def test_unknown_inject(runner: SkillRunner, skills: Skills) -> None:
    with pytest.raises(ValueError) as exc:
        runner.call("policy_search", {"keyword": "新能源补贴"}, inject="crash")
    assert str(exc.value) == (
        "cannot inject 'crash': one of error, timeout, breaker_open, empty_claim, bad_output"
    )
    assert skills.search.calls == []
    assert runner.records() == []


def test_unknown_skill(runner: SkillRunner) -> None:
    with pytest.raises(KeyError) as exc:
        runner.call("weather", {})
    assert exc.value.args[0] == (
        "no skill contract named 'weather' "
        "(the pack has: ping, policy_explain, policy_search, pong, slow_search)"
    )


# ---- the fallback chain's depth, objections after success, the recorder ----------------------


def test_a_skill_a_fallback_calls_runs_without_its_own_protocol(
    runner: SkillRunner, skills: Skills
) -> None:
    """ping's protocol calls pong, whose protocol calls ping: pong fails, its own protocol
    does not run (no loop, no second ticket), and ping's chain goes on to its next step."""
    got = runner.call("ping", {})
    assert (got.status, got.text) == ("failed", NO_ANSWER)
    assert got.fallback is not None
    assert got.fallback.steps == (
        StepTrace("always -> call pong", True, "pong failed too (error)"),
    )
    assert summary(runner.records()) == [
        ("pong", "failed", "error", "RuntimeError: pong down", None, 1),
        ("ping", "failed", "error", "RuntimeError: ping down", "none", 0),
    ]
    assert (len(skills.ping.calls), len(skills.pong.calls)) == (1, 1)


@pytest.mark.parametrize(
    ("context", "text", "fallback"),
    [
        ({}, "该政策的要点是……", None),
        ({"confidence": 0.5}, "您想了解政策的哪一部分？", "clarify"),
    ],
)
def test_a_protocol_may_take_over_an_answer(
    runner: SkillRunner, context: dict[str, Any], text: str, fallback: str | None
) -> None:
    got = runner.call("policy_explain", {"keyword": "补贴"}, context)
    assert (got.status, got.text, got.failure) == ("ok", text, None)
    assert (got.fallback.action if got.fallback else None) == fallback
    assert summary(runner.records()) == [("policy_explain", "ok", None, "", fallback, 0)]


def test_a_step_that_applied_after_success_without_answering_is_recorded(
    runner: SkillRunner,
) -> None:
    # negations >= 2 -> handoff_human applies, but there is no ticket store: it cannot answer
    got = runner.call("policy_explain", {"keyword": "补贴"}, {"negations": 2})
    assert (got.status, got.text, got.fallback) == ("ok", "该政策的要点是……", None)
    # BUG: runner.py _answered records fallback=None when a step of the protocol applied (and
    # fired charter_on_fallback) but did not answer; _failed records "none" for the same
    # situation, and CallRecord.fallback documents "none" for "ran, nothing answered".
    # Fix: record ran.action when any(s.held for s in ran.steps), as _failed does.
    assert summary(runner.records()) == [("policy_explain", "ok", None, "", "none", 0)]


def test_recorder_and_events(make_runner: MakeRunner, skills: Skills) -> None:
    recorded: list[CallRecord] = []
    hooks: list[str] = []
    runner = make_runner(recorder=recorded.append, notify=lambda hook, _event: hooks.append(hook))
    runner.call("policy_search", {"keyword": "新能源补贴"})
    runner.call("policy_search", {"keyword": "新能源补贴"}, inject="timeout")
    assert recorded == runner.records()
    assert summary(recorded) == [
        ("policy_search", "ok", None, "", None, 0),
        ("policy_search", "failed", "timeout", "timed out (injected)", "template", 0),
    ]
    assert hooks == ["charter_on_fallback"]


def test_records_keep_the_newest(make_runner: MakeRunner) -> None:
    runner = make_runner(keep=2)
    for keyword in ("补贴一", "补贴二", "补贴三"):
        runner.call("policy_search", {"keyword": keyword})
    assert len(runner.records()) == 2


# ---- a contract's tests: ----------------------------------------------------------------------


def test_contract_cases(pack: CompiledPack, reg: Registry) -> None:
    assert pack.skills is not None
    contract = pack.skills.contract("policy_search")
    assert contract is not None
    with SkillCaseRunner(pack, reg) as cases:
        results = [run_skill_case(pack, "policy_search", c, cases.call) for c in contract.cases]
    assert [(r.pack, r.case.name, r.problems) for r in results] == [
        ("run/policy_search", "正常检索", ()),
        ("run/policy_search", "年份超出能力边界", ()),
        ("run/policy_search", "接口超时", ()),
        ("run/policy_search", "空结果却声称找到", ()),
        (
            "run/policy_search",
            "写错了的期望",
            (
                'status: expected "failed", got "ok"',
                "results: expected 2, got 1",
                'failure: expected "error", got (none)',
                'action: expected "handoff_human", got "none"',
            ),
        ),
    ]


def test_slow_answers_open_the_breaker(tmp_path: Path, registry: Registry) -> None:
    """A deliberately slow skill: every answer arrives, but later than the contract's ``slow``
    (sleeping 40 ms against 10 ms: no bound on how long anything takes is asserted, only that
    a sleep lasts at least as long as asked). Two slow answers in a row open the breaker."""
    root = tmp_path / "pack"
    (root / "skills").mkdir(parents=True)
    (root / "pack.yaml").write_text(PACK, encoding="utf-8")
    (root / "skills" / "sluggish.yaml").write_text(
        "name: sluggish\ndescription: 慢\ninput_schema: {type: object}\n"
        "output_schema: {type: object}\nlimits: {timeout: 10s}\n"
        "breaker: {failures: 2, slow: 10ms, cooldown: 60s}\n",
        encoding="utf-8",
    )

    class Sluggish:
        name = "sluggish"
        description = "慢"
        calls = 0

        def __call__(self, args: Mapping[str, Any]) -> Any:
            Sluggish.calls += 1
            time.sleep(0.04)
            return {"summary": "终于好了"}

    reg = replace(registry, skills={**registry.skills, "sluggish": Sluggish()})
    pack, diags = compile_path(root, reg, cache_dir=None)
    assert pack is not None and pack.skills is not None and diags == []
    runner = SkillRunner(pack.skills, reg, pack=pack.name)
    try:
        assert [runner.call("sluggish", {}).status for _ in range(2)] == ["ok", "ok"]
        snap = runner.breakers.get("sluggish").snapshot()
        assert (snap.state, snap.strikes, snap.reason) == (
            "open",
            2,
            "2 consecutive calls slower than 0.01 s",
        )
        refused = runner.call("sluggish", {})
        assert (refused.status, refused.failure.kind if refused.failure else None) == (
            "failed",
            "breaker_open",
        )
        assert Sluggish.calls == 2
    finally:
        runner.close()
