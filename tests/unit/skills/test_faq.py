"""The FAQ of the degrade_to_faq fallback: tokens, BM25 ranking with normalised scores, the
minimum score, skill restriction, pickling, and the compile stage's diagnostics."""

from __future__ import annotations

import importlib
import math
import pickle
import random
from pathlib import Path

import pytest

from charter.compile.faq import compile_faq
from charter.compile.specs.faq import DEFAULT_MIN_SCORE, FaqEntry, FaqIndex, tokenize
from charter.contracts.registry import Registry
from charter.diagnostics import Location, Severity
from charter.pack.schema import validate
from charter.pack.yamlsrc import load_yaml

ENTRIES = (
    FaqEntry(
        "subsidy-scope",
        "新能源补贴政策覆盖哪些年份？",
        "政策库覆盖2020—2023年。",
        ("补贴政策有哪些年份", "能查哪几年的政策"),
        frozenset({"policy_search"}),
    ),
    FaqEntry(
        "subsidy-apply",
        "新能源汽车补贴怎么申请？",
        "在当地政务平台申请。",
        ("购车补贴在哪里申请",),
        frozenset({"policy_search"}),
    ),
    FaqEntry(
        "refund", "怎么申请退货退款？", "订单页点“申请售后”。", ("退货流程是什么", "不想要了能退吗")
    ),
    FaqEntry("refund-time", "退款多久能到账？", "1—3个工作日。", ("钱什么时候退回来",)),
    FaqEntry("warranty", "SKU-A100的保修期是多久？", "两年。"),
    FaqEntry("invoice", "如何开具增值税发票？", "订单完成后在订单页申请。", ("发票怎么开",)),
    FaqEntry("password", "忘记登录密码怎么办？", "点“找回密码”。", ("密码找回",)),
    FaqEntry(
        "deposit-rate",
        "定期存款利率是多少？",
        "见利率公告。",
        ("存款利息怎么算",),
        frozenset({"rate_query"}),
    ),
    FaqEntry(
        "fund-redeem",
        "基金赎回后几天到账？",
        "T+1至T+3。",
        ("赎回基金多久到账",),
        frozenset({"fund_query"}),
    ),
    FaqEntry("card-lost", "信用卡丢了怎么挂失？", "拨打客服电话挂失。", ("银行卡丢失挂失",)),
    FaqEntry("shipping", "下单后多久发货？", "48小时内。", ("什么时候发货", "订单还没发货")),
    FaqEntry("address", "怎么修改收货地址？", "发货前可在订单页修改。", ("收货地址填错了",)),
)


@pytest.fixture(scope="module")
def index() -> FaqIndex:
    return FaqIndex.build(ENTRIES)


def ranked(
    index: FaqIndex,
    query: str,
    *,
    skill: str | None = None,
    k: int = 1,
    min_score: float | None = None,
) -> list[tuple[str, float]]:
    matches = index.lookup(query, skill=skill, k=k, min_score=min_score)
    return [(m.entry.id, round(m.score, 4)) for m in matches]


# ---- tokens -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # search mode adds the words inside a longer one; stop words (哪些) and ？ go
        ("新能源补贴政策覆盖哪些年份？", ("能源", "新能源", "补贴", "政策", "覆盖", "年份")),
        ("2024年的补贴政策能查吗", ("2024", "年", "补贴", "政策", "能查")),
        # product codes keep their whole and their parts, case folded
        ("SKU-A100保修几年", ("sku", "a100", "sku-a100", "保修", "几年")),
        ("iPhone15怎么退货", ("iphone15", "退货")),
        # NFKC: full-width letters, digits and hyphen become ASCII
        ("ＳＫＵ－Ａ１００保修", ("sku", "a100", "sku-a100", "保修")),
        ("政策库覆盖2020—2023年", ("政策", "库", "覆盖", "2020", "2023", "年")),
        ("怎么办？", ()),
        ("  ，。！  ", ()),
        ("", ()),
    ],
)
def test_tokenize(text: str, tokens: tuple[str, ...]) -> None:
    assert tokenize(text) == tokens


# ---- ranking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("2024年的补贴政策能查吗", [("subsidy-scope", 0.4272), ("subsidy-apply", 0.1551)]),
        ("补贴政策覆盖到哪一年", [("subsidy-scope", 0.4131), ("subsidy-apply", 0.1551)]),
        ("买新能源车的补贴去哪申请", [("subsidy-apply", 0.5076), ("subsidy-scope", 0.3495)]),
        ("东西不想要了怎么退", [("refund", 0.7784)]),
        ("退款几天到账", [("refund-time", 0.6048), ("fund-redeem", 0.5299)]),
        ("SKU-A100保修几年", [("warranty", 0.7225), ("subsidy-scope", 0.2546)]),
        ("sku a100 保修", [("warranty", 0.7094)]),
        ("增值税发票怎么开", [("invoice", 0.7384)]),
        ("登录密码找不回来", [("password", 0.4461), ("refund", 0.2447)]),
        ("信用卡丢了", [("card-lost", 0.8799)]),
        ("我的订单什么时候发货", [("shipping", 0.7598)]),
        # an alternate said word for word; a phrasing shorter than the query caps at 1
        ("能查哪几年的政策", [("subsidy-scope", 1.0)]),
        ("基金赎回多久到账", [("fund-redeem", 1.0), ("refund-time", 0.5071)]),
        # nothing in common: no entry at all, not even at min_score 0
        ("今天天气怎么样", []),
        ("帮我订一张去上海的机票", []),
    ],
)
def test_paraphrases_rank_the_right_entry_first(
    index: FaqIndex, query: str, expected: list[tuple[str, float]]
) -> None:
    assert ranked(index, query, k=2, min_score=0.0) == expected


def test_the_question_itself_scores_one_when_the_index_agrees_with_the_self_score() -> None:
    # one phrasing: its length is the average, so BM25 and the self-score are the same sum
    single = FaqIndex.build([FaqEntry("a", "新能源补贴政策覆盖哪些年份？", "…")])
    (match,) = single.lookup("新能源补贴政策覆盖哪些年份？")
    assert match.score == pytest.approx(1.0, abs=1e-6)
    # by hand: N = 1, df = 1, so idf = ln(1 + 0.5/1.5); 4 query words against avgdl 6
    idf, norm = math.log(4 / 3), 1.5 * (0.25 + 0.75 * 4 / 6)
    assert single.self_score(tokenize("新能源补贴政策")) == pytest.approx(4 * idf / (1 + norm))
    assert round(single.self_score(tokenize("新能源补贴政策")), 4) == 0.5415


def test_an_unknown_word_weighs_as_the_rarest_word(index: FaqIndex) -> None:
    assert ranked(index, "信用卡丢了怎么挂失") == [("card-lost", 1.0)]
    # the question is longer than the query: BM25's length normalisation takes its share
    assert ranked(index, "信用卡") == [("card-lost", 0.7598)]
    assert ranked(index, "信用卡额度") == [("card-lost", 0.5206)]  # 额度 is in no phrasing


# ---- the minimum score --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "min_score", "expected"),
    [
        ("地址写错了怎么改", None, []),  # 0.2297 < the default 0.35
        ("地址写错了怎么改", 0.2, [("address", 0.2297)]),
        ("我想退货", None, [("refund", 0.3736)]),
        ("我想退货", 0.375, []),
        ("贷款利率上调了吗", None, []),  # shares only 利率 with deposit-rate: 0.2340
    ],
)
def test_min_score(
    index: FaqIndex, query: str, min_score: float | None, expected: list[tuple[str, float]]
) -> None:
    assert ranked(index, query, min_score=min_score) == expected


def test_the_index_min_score_is_the_default_floor() -> None:
    assert DEFAULT_MIN_SCORE == 0.35
    strict = FaqIndex.build(ENTRIES, min_score=0.8)
    assert ranked(strict, "信用卡丢了") == [("card-lost", 0.8799)]
    assert ranked(strict, "增值税发票怎么开") == []


# ---- skills and k -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "skill", "expected"),
    [
        ("补贴政策", None, [("subsidy-scope", 0.8635), ("subsidy-apply", 0.4034)]),
        ("补贴政策", "policy_search", [("subsidy-scope", 0.8635), ("subsidy-apply", 0.4034)]),
        ("补贴政策", "rate_query", []),  # both entries serve policy_search only
        ("补贴政策", "no_such_skill", []),
        ("退货退款", "rate_query", [("refund", 0.8635), ("refund-time", 0.4317)]),  # no skills: all
        ("存款利率", "rate_query", [("deposit-rate", 0.7598)]),
        ("存款利率", "fund_query", []),
    ],
)
def test_skill_restriction(
    index: FaqIndex, query: str, skill: str | None, expected: list[tuple[str, float]]
) -> None:
    assert ranked(index, query, skill=skill, k=3, min_score=0.3) == expected


@pytest.mark.parametrize(
    ("k", "ids"),
    [
        (0, []),
        (1, ["fund-redeem"]),
        (2, ["fund-redeem", "refund-time"]),
        (3, ["fund-redeem", "refund-time", "shipping"]),
        (12, ["fund-redeem", "refund-time", "shipping", "warranty"]),  # the rest score 0
    ],
)
def test_k(index: FaqIndex, k: int, ids: list[str]) -> None:
    matches = index.lookup("赎回多久到账", k=k, min_score=0.0)
    assert [m.entry.id for m in matches] == ids
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)


@pytest.mark.parametrize("query", ["", "   ", "？！……", "怎么办", "是不是"])
def test_a_query_without_searchable_words_is_a_miss(index: FaqIndex, query: str) -> None:
    assert index.lookup(query, min_score=0.0) == []


def test_an_empty_faq_is_always_a_miss() -> None:
    empty = FaqIndex.build([])
    assert empty.lookup("退货") == []
    unsearchable = FaqIndex.build([FaqEntry("a", "怎么办？", "…")])
    assert unsearchable.docs == () and unsearchable.lookup("怎么办", min_score=0.0) == []


def test_entry_serves() -> None:
    scoped, everyone = ENTRIES[0], ENTRIES[2]
    assert [scoped.serves(s) for s in (None, "policy_search", "rate_query")] == [True, True, False]
    assert [everyone.serves(s) for s in (None, "policy_search", "rate_query")] == [True] * 3
    assert scoped.phrasings == (
        "新能源补贴政策覆盖哪些年份？",
        "补贴政策有哪些年份",
        "能查哪几年的政策",
    )


# ---- pickling -----------------------------------------------------------------------------------


def test_pickle_round_trip_rebuilds_the_retriever_lazily(index: FaqIndex) -> None:
    data = pickle.dumps(index)
    assert b"bm25s" not in data  # the library's objects are never in the cache
    copy = pickle.loads(data)
    assert copy == index and hash(copy) == hash(index)
    assert copy._built is None
    queries = ("2024年的补贴政策能查吗", "SKU-A100保修几年", "退款几天到账", "今天天气怎么样")
    for query in queries:
        assert copy.lookup(query, k=3, min_score=0.0) == index.lookup(query, k=3, min_score=0.0)
    assert copy._built is not None
    assert pickle.loads(pickle.dumps(copy)) == index


# ---- the compile stage --------------------------------------------------------------------------

FAQ_YAML = """\
min_score: 0.4
entries:
  - id: subsidy-scope
    question: 新能源补贴政策覆盖哪些年份？
    alternates: [补贴政策有哪些年份, 怎么办]
    answer: 政策库目前覆盖2020—2023年的国家及省级政策文件。
    skills: [policy_search]
  - id: refund
    question: 怎么申请退货退款？
    answer: 订单页点“申请售后”。
  - id: subsidy-scope
    question: 补贴覆盖哪些年份
    answer: 同上。
  - id: vague
    question: 是不是？
    answer: 请说具体些。
"""


def test_compile_faq() -> None:
    path = "domains/finance/faq.yaml"
    doc, load_diags = load_yaml(path, FAQ_YAML)
    assert doc is not None and load_diags == [] and validate(doc, "faq") == []
    index, diags = compile_faq(doc, Registry())
    assert [(d.code, d.severity, d.message, d.location, d.hint) for d in diags] == [
        (
            "CH331",
            Severity.WARNING,
            "alternate 2 of FAQ 'subsidy-scope' has no searchable words: no query can match it",
            Location(path, 5, 29, 5, 32),
            "punctuation and words such as 怎么, 哪些, 吗 are not searched; say what it is about "
            "(退货, 补贴政策, SKU-A100)",
        ),
        (
            "CH330",
            Severity.ERROR,
            "FAQ id 'subsidy-scope' is defined twice",
            Location(path, 11, 9, 11, 22),
            "the first is item 1 of 'entries'; rename one",
        ),
        (
            "CH331",
            Severity.WARNING,
            "the question of FAQ 'vague' has no searchable words: no query can match it",
            Location(path, 15, 15, 15, 19),
            "punctuation and words such as 怎么, 哪些, 吗 are not searched; say what it is about "
            "(退货, 补贴政策, SKU-A100)",
        ),
    ]
    assert index.min_score == 0.4
    assert [e.id for e in index.entries] == ["subsidy-scope", "refund", "vague"]
    first = index.entries[0]
    assert first.alternates == ("补贴政策有哪些年份", "怎么办")
    assert first.skills == {"policy_search"}
    assert first.location == Location(path, 3, 5, 7, 28)
    assert index.entries[1].skills == frozenset() and index.entries[1].alternates == ()
    assert ranked(index, "补贴政策覆盖哪些年份") == [("subsidy-scope", 0.8163)]
    assert ranked(index, "补贴政策覆盖哪几年") == []  # 0.3920, under the file's 0.4
    assert ranked(index, "申请退货", skill="policy_search") == [("refund", 0.8732)]


@pytest.mark.parametrize(
    ("text", "min_score", "ids"),
    [
        ("", DEFAULT_MIN_SCORE, []),
        ("entries: []\n", DEFAULT_MIN_SCORE, []),
        ("min_score: 2\nentries: 3\n", DEFAULT_MIN_SCORE, []),  # the schema reports both
        ("min_score: 0\nentries:\n  - id: a\n    question: 退货\n", 0.0, []),  # no answer
        (
            "entries:\n  - id: a\n    question: 退货\n    answer: 好\n  - 7\n",
            DEFAULT_MIN_SCORE,
            ["a"],
        ),
    ],
)
def test_compile_faq_skips_what_the_schema_rejects(
    text: str, min_score: float, ids: list[str]
) -> None:
    doc, _ = load_yaml("faq.yaml", text)
    assert doc is not None
    index, diags = compile_faq(doc, Registry())
    assert diags == [] and index.min_score == min_score
    assert [e.id for e in index.entries] == ids


ENTRY = "entries:\n  - id: a\n    question: 退货\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "entries:\n  - id: Bad_Id\n    question: 退货\n    answer: 好\n",
            (
                "CH013",
                "'id' must be lowercase letters, digits and '-', starting with a letter, not 'Bad_Id'",
            ),
        ),
        (ENTRY, ("CH011", "missing required key 'answer' in FAQ entry 'a'")),
        (
            ENTRY + "    answer: 好\n    skills: [Policy]\n",
            (
                "CH013",
                "item 1 of 'skills' must be lower case letters, digits and _, starting with a letter: policy_search, not 'Policy'",
            ),
        ),
        (
            ENTRY + "    answer: 好\n    skills: []\n",
            ("CH013", "'skills' must not be empty"),
        ),
        (
            ENTRY + "    answer: 好\n    tags: [x]\n",
            ("CH012", "unknown key 'tags'"),
        ),
        ("min_score: 1.5\n", ("CH013", "'min_score' must be at most 1, not 1.5")),
    ],
)
def test_schema(text: str, expected: tuple[str, str]) -> None:
    doc, _ = load_yaml("faq.yaml", text)
    assert doc is not None
    assert [(d.code, d.message) for d in validate(doc, "faq")] == [expected]


# ---- the benchmark ------------------------------------------------------------------------------


def test_the_benchmark_runs_and_its_queries_paraphrase_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(Path(__file__).resolve().parents[3] / "benchmarks")
    bench = importlib.import_module("bench_faq")
    entries, queries = bench.generate(bench.FULL, random.Random(bench.SEED))
    assert len({e.id for e in entries}) == 1000 and len(queries) == 2000
    assert entries[0].question == "SKU-A100信用卡怎么申请？"
    assert entries[0].alternates == ("信用卡的申请流程是什么",)
    lines, figures = bench.faq_lookup(quick=True)
    assert lines[0] == (
        "FAQ lookup, 200 generated Chinese entries (400 phrasings), 200 paraphrased queries, k=3:"
    )
    assert lines[-1] == "  the paraphrased entry first for 183 of 200 queries"
    assert (figures["entries"], figures["phrasings"], figures["queries"]) == (200, 400, 200)
    assert set(figures["lookup_ms"]) == {"p50", "p99"}
