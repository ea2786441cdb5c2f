"""FAQ lookup latency, for ``bench_skills.py`` (which prints it; nothing is printed here).

N generated Chinese FAQ entries: every pair of a subject (信用卡, 定期存款, 新能源补贴 ...; some
carry a product code such as SKU-A123, so mixed text is in the index) and an aspect (怎么申请,
利率是多少, 多久到账 ...), each with one alternate phrasing, some restricted to a skill. Q
queries paraphrase a random entry: a filler such as 请问 or 我想知道, the subject, and another
wording of the aspect (利率是多少 becomes 利息怎么算). Each ``FaqIndex.lookup`` (tokenising,
BM25 over every phrasing, normalising, the top k) is timed on its own with the garbage
collector off; half of the queries name a skill.

Also reported: building the index, its pickle's size, and the first lookup after unpickling
(when the retriever is rebuilt from the pickled tokens); and for how many queries the entry the
query paraphrases came first (reported, not a target: it is a lexical ranker).
"""

from __future__ import annotations

import gc
import pickle
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any

from charter.compile.specs.faq import FaqEntry, FaqIndex

SEED = 20240501
_SUBJECTS = """
信用卡 借记卡 定期存款 活期存款 大额存单 基金定投 货币基金 理财产品 个人房贷 汽车贷款
消费贷款 跨行转账 境外汇款 手机银行 网上银行 积分兑换 增值税发票 电子回单 退货退款 快递配送
会员等级 优惠券 延保服务 以旧换新 新能源补贴 购置税减免 社保缴费 公积金提取 养老保险 医疗报销
个税汇算 外币兑换 保险箱租赁 贵金属 国债 信托计划 分期付款 商户收款 企业开户 票据贴现
"""
# how the question says it / how a query says it
_ASPECTS = """
怎么申请/申请流程是什么 利率是多少/利息怎么算 手续费多少/收费标准 多久到账/到账时间
怎么取消/取消办法 额度多少/最高能到多少额度 有效期多久/过期时间 需要什么材料/要准备哪些证件
在哪里办理/办理网点 能否提前结束/提前终止的规定 怎么修改信息/信息变更 怎么查询进度/进度查询
有什么条件/申请门槛 风险大吗/风险等级 怎么投诉/投诉渠道 支持哪些地区/覆盖范围
每天限额多少/单日上限 怎么开通/开通方法 失败了怎么办/办理失败的处理 年费多少/每年的费用
有优惠吗/优惠活动 政策覆盖哪些年份/政策年份范围 怎么续期/续期手续 能线上办吗/网上办理
税费怎么计算/税费标准
"""
SUBJECTS: tuple[str, ...] = tuple(_SUBJECTS.split())
ASPECTS: tuple[tuple[str, str], ...] = tuple(
    (ask, alt) for ask, alt in (pair.split("/") for pair in _ASPECTS.split())
)
FILLERS = ("", "请问", "我想知道", "麻烦问下", "你好，")
SKILLS = ("policy_search", "rate_query", "order_query")


@dataclass(frozen=True)
class Size:
    entries: int
    queries: int


QUICK = Size(entries=200, queries=200)
FULL = Size(entries=1_000, queries=2_000)


def _subject(s: int) -> str:
    name = SUBJECTS[s]
    return f"SKU-A{100 + s}{name}" if s % 4 == 0 else name


def generate(size: Size, rng: random.Random) -> tuple[list[FaqEntry], list[tuple[str, str, str]]]:
    """The entries, and the queries as (text, the id it paraphrases, skill or "")."""
    pairs = [(s, a) for s in range(len(SUBJECTS)) for a in range(len(ASPECTS))]
    rng.shuffle(pairs)
    entries = []
    for s, a in sorted(pairs[: size.entries]):
        ask, alt = ASPECTS[a]
        skills = frozenset({SKILLS[(s + a) % 4]}) if (s + a) % 4 < 3 else frozenset()
        entries.append(
            FaqEntry(
                id=f"e{s:02d}-{a:02d}",
                question=f"{_subject(s)}{ask}？",
                answer=f"关于{SUBJECTS[s]}的{alt}，请以最新公告为准。",
                alternates=(f"{SUBJECTS[s]}的{alt}",),
                skills=skills,
            )
        )
    queries = []
    for n in range(size.queries):
        entry = rng.choice(entries)
        s, a = (int(part) for part in entry.id[1:].split("-"))
        _, alt = ASPECTS[a]
        text = f"{rng.choice(FILLERS)}{_subject(s)}{alt}"
        skill = next(iter(entry.skills), "") if n % 2 else ""
        queries.append((text, entry.id, skill))
    return entries, queries


def _p(ns: list[int], q: int) -> float:
    return statistics.quantiles(ns, n=100)[q - 1] / 1e6 if len(ns) > 1 else ns[0] / 1e6


def faq_lookup(quick: bool) -> tuple[list[str], dict[str, Any]]:
    size = QUICK if quick else FULL
    entries, queries = generate(size, random.Random(SEED))
    t0 = time.perf_counter_ns()
    index = FaqIndex.build(entries)
    build_ms = (time.perf_counter_ns() - t0) / 1e6
    data = pickle.dumps(index)
    t0 = time.perf_counter_ns()
    copy = pickle.loads(data)
    copy.lookup(queries[0][0])
    reload_ms = (time.perf_counter_ns() - t0) / 1e6
    for text, _, skill in queries[:20]:  # warm caches and the tokeniser
        index.lookup(text, skill=skill or None)
    ns: list[int] = []
    first = 0
    gc.disable()
    try:
        for text, want, skill in queries:
            t0 = time.perf_counter_ns()
            hits = index.lookup(text, skill=skill or None, k=3)
            ns.append(time.perf_counter_ns() - t0)
            first += bool(hits) and hits[0].entry.id == want
    finally:
        gc.enable()
    p50, p99 = _p(ns, 50), _p(ns, 99)
    phrasings = len(index.docs)
    lines = [
        f"FAQ lookup, {len(entries):,} generated Chinese entries ({phrasings:,} phrasings), "
        f"{len(queries):,} paraphrased queries, k=3:",
        f"  built in {build_ms:.1f} ms; pickle {len(data) / 1024:.0f} KiB, unpickled and "
        f"first lookup in {reload_ms:.1f} ms",
        f"  {'per query':<34}{'p50 ms':>9}{'p99 ms':>9}",
        f"  {'FaqIndex.lookup':<34}{p50:>9.3f}{p99:>9.3f}",
        f"  the paraphrased entry first for {first:,} of {len(queries):,} queries",
    ]
    figures = {
        "entries": len(entries),
        "phrasings": phrasings,
        "queries": len(queries),
        "build_ms": round(build_ms, 2),
        "pickle_bytes": len(data),
        "unpickle_first_lookup_ms": round(reload_ms, 2),
        "lookup_ms": {"p50": round(p50, 4), "p99": round(p99, 4)},
        "right_first": first,
    }
    return lines, figures
