"""NFKC normalisation with spans mapped back (``charter.text.unicode_norm``), and the personal data
heard in a turn matched literally afterwards (``charter.memory.pii_heard``), through
``PiiHandler`` (issue 17)."""

from __future__ import annotations

import threading

import pytest

from charter.contracts.registry import Registry
from charter.memory import pii_heard
from charter.memory.pii_scan import PiiHandler
from charter.memory.pipeline import WritePipeline
from charter.text.unicode_norm import normalize
from tests.support.memory import KEY, POLICY
from tests.support.memory import PIPELINE_T0 as T0

TYPO_ID = "110101199003071234"


@pytest.mark.parametrize(
    ("written", "text"),
    [
        ("手机１３８１２３４５６７８", "手机13812345678"),
        ("ＩＤ：ａｂｃＸ", "ID：abcX"),  # the full-width colon is punctuation: kept as typed
        ("𝟏𝟑𝟖", "138"),
        ("⑴⒉", "(1)2."),
        ("（０７５５）", "（0755）"),
        ("https://a.cn/x，13812345678", "https://a.cn/x，13812345678"),
        ("\u3000１\uff0d２", "\u30001\uff0d2"),  # spaces and dashes: each recognizer folds them
    ],
)
def test_normalize(written: str, text: str) -> None:
    assert normalize(written).text == text


def test_spans_map_back_to_whole_written_characters() -> None:
    norm = normalize("a⑴１３８ｘ")
    assert norm.text == "a(1)138x"
    assert norm.original(0, 1) == (0, 1)
    assert norm.original(2, 3) == (1, 2)  # the 1 inside ⑴ is all of ⑴
    assert norm.original(1, 7) == (1, 5)
    assert norm.original(3, 8) == (1, 6)  # from the ) of ⑴ to ｘ
    assert norm.original(4, 4) == (2, 2)
    one_for_one = normalize("手机１３８")
    assert one_for_one.identity
    assert one_for_one.original(2, 5) == (2, 5)


def test_a_match_replaces_the_characters_as_typed(registry: Registry) -> None:
    pii = PiiHandler(POLICY, registry.pii_recognizers.values())
    assert pii.scan("⑴手机１３８１２３４５６７８⑵", in_clear=True).text == "⑴手机[PHONE]⑵"
    assert pii.scan("手机\U0001d7cf\U0001d7d1\U0001d7d612345678", in_clear=True).text == (
        "手机[PHONE]"
    )


def test_heard_values_are_found_again_within_the_turn_only(registry: Registry) -> None:
    pipe = WritePipeline(POLICY, registry, KEY, clock=lambda: T0)
    echo = f"税号{TYPO_ID}，请核对"
    assert pipe.scrub(echo) == echo  # alone, 18 digits with a wrong check character
    with pipe.pii.heard(f"身份证号{TYPO_ID}"):
        assert pipe.scrub(echo) == "税号[ID]，请核对"
        assert pipe.scrub(TYPO_ID) == "[ID]"
        assert pipe.scrub("税号１１０１ ０１１９ ９００３ ０７１２ ３４") == "税号[ID]"
        assert pipe.scrub(f"{TYPO_ID}5") == f"{TYPO_ID}5"  # a longer number is another
    assert pipe.scrub(echo) == echo  # the scope ended: nothing is remembered


def test_hear_outside_a_turn_remembers_nothing(registry: Registry) -> None:
    pipe = WritePipeline(POLICY, registry, KEY, clock=lambda: T0)
    pipe.pii.hear("id_card", TYPO_ID)
    assert pipe.scrub(TYPO_ID) == TYPO_ID
    with pipe.pii.heard("你好"):
        pipe.pii.hear("id_card", TYPO_ID)
        pipe.pii.hear("bank_card", "8387")  # shorter than pii_heard.MIN_LENGTH
        assert pipe.scrub(f"{TYPO_ID}，尾号8387") == "[ID]，尾号8387"
    assert pii_heard.MIN_LENGTH == 6


def test_another_thread_does_not_hear_this_turn(registry: Registry) -> None:
    """Concurrent turns of other users run in other threads: each has its own scope."""
    pipe = WritePipeline(POLICY, registry, KEY, clock=lambda: T0)
    seen: list[str] = []
    with pipe.pii.heard(f"身份证号{TYPO_ID}"):
        worker = threading.Thread(target=lambda: seen.append(pipe.scrub(TYPO_ID)))
        worker.start()
        worker.join()
        assert pipe.scrub(TYPO_ID) == "[ID]"
    assert seen == [TYPO_ID]
