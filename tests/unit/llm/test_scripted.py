"""The ``scripted`` backend: answers in order or by pattern, recorded calls, the grammar
subset it checks, and one answer per call under threads."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from charter.config.settings import PluginSettings
from charter.contracts.models import LLM, Completion, Message
from charter.llm.errors import LLMBadResponse, LLMError
from charter.llm.scripted import ScriptedCall, ScriptedLLM, literal_alternatives
from charter.plugins.host import make_host


def user(text: str) -> list[Message]:
    return [Message("system", "你是客服。"), Message("user", text)]


def say(llm: LLM, text: str = "您好", **kw: Any) -> Completion:
    return llm.generate(user(text), max_tokens=kw.pop("max_tokens", 16), temperature=0.0, **kw)


def test_answers_in_order_then_a_clear_error() -> None:
    llm = ScriptedLLM(["您好！", "hello world"])
    assert say(llm) == Completion("您好！", 3)
    assert say(llm) == Completion("hello world", 11)  # characters, not words
    with pytest.raises(LLMError) as e:
        say(llm, "还有吗")
    assert str(e.value) == (
        "scripted backend: call 3 has no answer: all 2 answers were used "
        "(last user message: '还有吗')"
    )


def test_logprobs_pass_through_and_count_the_tokens() -> None:
    llm = ScriptedLLM(
        [
            {"text": "大概是吧", "logprobs": [-1.2, -2.3, -0.7]},
            {"text": "是", "logprobs": [-0.01], "tokens": 5},
            {"text": "否", "tokens": 0},
        ]
    )
    assert say(llm) == Completion("大概是吧", 3, (-1.2, -2.3, -0.7))
    assert say(llm) == Completion("是", 5, (-0.01,))
    assert say(llm) == Completion("否", 0)


def test_default_after_the_answers_every_time() -> None:
    llm = ScriptedLLM(["一"], default="好的。")
    assert [say(llm).text for _ in range(3)] == ["一", "好的。", "好的。"]
    assert ScriptedLLM(default={"text": "嗯", "logprobs": [-3]}).generate(
        [], max_tokens=1, temperature=1.0
    ) == Completion("嗯", 1, (-3.0,))


def test_script_by_pattern_on_the_last_user_message() -> None:
    llm = ScriptedLLM(
        script={
            r"退款|退货": ["请提供订单号。", "已提交。"],
            r"AC-\d+": "查到了。",
            r"(?i)hello": "您好！",
        },
        default="抱歉，我不明白。",
    )
    assert say(llm, "我要退款").text == "请提供订单号。"
    assert say(llm, "订单 AC-1").text == "查到了。"
    assert say(llm, "订单 AC-2").text == "查到了。"  # a single answer repeats
    assert say(llm, "HELLO").text == "您好！"
    assert say(llm, "退货 AC-3").text == "已提交。"  # the first pattern that matches wins
    assert say(llm, "天气").text == "抱歉，我不明白。"
    with pytest.raises(LLMError) as e:
        say(llm, "还是要退款")
    assert str(e.value) == (
        "scripted backend: call 7 has no answer: the 2 answers of script pattern '退款|退货' "
        "were all used (last user message: '还是要退款')"
    )


def test_script_without_default() -> None:
    llm = ScriptedLLM(script={"退款": "好"})
    with pytest.raises(LLMError) as e:
        say(llm, "天气")
    assert str(e.value) == (
        "scripted backend: call 1 has no answer: no script pattern matches "
        "(last user message: '天气')"
    )


def test_the_last_user_message_is_the_one_matched() -> None:
    llm = ScriptedLLM(script={"^first$": "1", "^second$": "2", "^$": "none"})
    history = [
        Message("user", "first"),
        Message("assistant", "second"),
        Message("user", "second"),
        Message("assistant", "first"),
    ]
    assert llm.generate(history, max_tokens=4, temperature=0.0).text == "2"
    assert llm.generate([Message("system", "first")], max_tokens=4, temperature=0.0).text == "none"


def test_every_call_is_recorded_even_one_that_fails() -> None:
    llm = ScriptedLLM(["好"])
    say(llm, "一", max_tokens=8, stop=["\n"], grammar='root ::= "好"')
    with pytest.raises(LLMError):
        llm.generate([Message("user", "二")], max_tokens=4, temperature=0.7)
    assert llm.calls == (
        ScriptedCall(tuple(user("一")), 8, 0.0, ("\n",), 'root ::= "好"'),
        ScriptedCall((Message("user", "二"),), 4, 0.7, (), None),
    )


def test_remaining_counts_the_answers_given_once() -> None:
    llm = ScriptedLLM(script={"a": ["1", "2"], "b": "3"})
    assert llm.remaining == 2
    say(llm, "b")
    say(llm, "a")
    assert llm.remaining == 1
    answers = ScriptedLLM(["1", "2", "3"])
    say(answers)
    assert answers.remaining == 2


def test_threads_each_get_a_different_answer() -> None:
    answers = [f"答案{i}" for i in range(200)]
    llm = ScriptedLLM(answers)
    got: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker() -> None:
        start.wait()
        for _ in range(25):
            text = say(llm).text
            with lock:
                got.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == sorted(answers)
    assert len(llm.calls) == 200 and llm.remaining == 0


# ---- grammar ----------------------------------------------------------------------------------


def test_an_answer_outside_a_literal_grammar_is_a_bad_response() -> None:
    llm = ScriptedLLM(["是", "也许"])
    assert say(llm, grammar='root ::= "是" | "否"').text == "是"
    with pytest.raises(LLMBadResponse) as e:
        say(llm, grammar='root ::= "是" | "否"')
    assert str(e.value) == (
        "scripted backend: answer '也许' does not match the grammar, which accepts only '是', '否'"
    )


def test_other_grammars_are_recorded_not_checked() -> None:
    grammar = 'root ::= answer\nanswer ::= "是" | "否"'
    llm = ScriptedLLM(["也许"])
    assert say(llm, grammar=grammar).text == "也许"
    assert llm.calls[0].grammar == grammar


@pytest.mark.parametrize(
    ("grammar", "accepted"),
    [
        ('root ::= "yes"', ("yes",)),
        ('root::="是"|"否"', ("是", "否")),
        ('# yes or no\nroot ::= "yes"\n    | "no"\n', ("yes", "no")),
        (
            r'root ::= "say \"hi\"" | "a\\b" | "x\ny" | "\x41\u4e2d\U0001F600"',
            ('say "hi"', "a\\b", "x\ny", "A中😀"),
        ),
        ('root ::= "a" "b"', None),
        ("root ::= [a-z]+", None),
        ('root ::= "a" | b', None),
        ('start ::= "a"', None),
        ('root ::= "a"\nother ::= "b"', None),
        ("", None),
    ],
)
def test_literal_alternatives(grammar: str, accepted: tuple[str, ...] | None) -> None:
    assert literal_alternatives(grammar) == accepted


# ---- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "give answers, script or default"),
        ({"answers": ["a"], "script": {"a": "b"}}, "give either answers or script, not both"),
        ({"answer": ["a"]}, "unknown option 'answer'; did you mean 'answers'?"),
        ({"answers": "a"}, "answers must be a list, not 'a'"),
        ({"answers": [1]}, "answers[0] must be a string or a mapping, not 1"),
        (
            {"answers": [{"txt": "a"}]},
            "answers[0] has unknown key 'txt'; expected text, logprobs, tokens",
        ),
        ({"answers": [{"logprobs": []}]}, "answers[0].text must be a string, not None"),
        (
            {"answers": ["a", {"text": "b", "logprobs": ["x"]}]},
            "answers[1].logprobs must be a list of numbers, not ['x']",
        ),
        (
            {"answers": [{"text": "b", "logprobs": "x"}]},
            "answers[0].logprobs must be a list of numbers, not 'x'",
        ),
        (
            {"answers": [{"text": "b", "tokens": -1}]},
            "answers[0].tokens must be an integer >= 0, not -1",
        ),
        ({"script": ["a"]}, "script must map regular expressions to answers, not ['a']"),
        (
            {"script": {"(": "a"}},
            "script pattern '(' is not a regular expression: missing ), unterminated subpattern at position 0",
        ),
        ({"script": {"a": [None]}}, "script['a'][0] must be a string or a mapping, not None"),
        ({"default": 3}, "default must be a string or a mapping, not 3"),
    ],
)
def test_bad_options(options: Mapping[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as e:
        ScriptedLLM.from_options(options)
    assert str(e.value) == f"scripted backend: {message}"


def test_the_registered_backend() -> None:
    backend = make_host(PluginSettings(autoload=False)).registry.llm_backends["scripted"]
    llm = backend.create({"answers": ["您好", {"text": "好", "logprobs": [-0.2]}]})
    assert isinstance(llm, LLM)
    assert say(llm) == Completion("您好", 2)
    assert say(llm) == Completion("好", 1, (-0.2,))
