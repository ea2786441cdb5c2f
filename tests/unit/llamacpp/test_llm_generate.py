"""Real generations with the bundled Gemma 3 270M: determinism, the chat template, grammars,
logprobs, timings and concurrent threads. Skipped when llama-cpp-python is not installed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import charter_llamacpp
import charter_llamacpp.llm
from charter.contracts.models import LLM, Completion, Message
from charter_llamacpp.errors import GrammarError, PromptError
from charter_llamacpp.llm import LlamaCompletion, LlamaCppLLM
from charter_llamacpp.plugin import LlamaCppBackend

pytestmark = pytest.mark.usefixtures("model_cache")

OPTS: dict[str, Any] = {"n_ctx": 1024, "seed": 42}
SYSTEM = "You are a helpful assistant. Answer in one word."
QUESTION = "What colour is the sky on a clear day?"
CHAT = [Message("system", SYSTEM), Message("user", QUESTION)]
YES_NO = 'root ::= "Y" | "N"'


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    return LlamaCppBackend().create(OPTS)


@pytest.fixture(scope="module")
def llm_logprobs() -> LlamaCppLLM:
    return LlamaCppBackend().create({**OPTS, "logprobs": True})


def bare_llama(llama_cpp: Any, path: Path, **kw: Any) -> Any:
    """Bare llama-cpp-python with the template the backend uses for this GGUF (which has none of
    its own: left alone, llama-cpp-python would format it as Llama 2)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = (Path(charter_llamacpp.__file__).parent / "templates" / "gemma3.jinja").read_text()
    handler = Jinja2ChatFormatter(
        template, eos_token="<eos>", bos_token="<bos>", stop_token_ids=[1]
    )
    return llama_cpp.Llama(
        model_path=str(path), chat_handler=handler.to_chat_handler(), verbose=False, **kw
    )


def bare_chat(llama: Any, **kw: Any) -> Any:
    return llama.create_chat_completion(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
        temperature=0.0,
        max_tokens=8,
        seed=42,
        **kw,
    )


def test_is_an_llm(llm: LlamaCppLLM) -> None:
    assert isinstance(llm, LLM)
    got = llm.generate(CHAT, max_tokens=8, temperature=0.0)
    assert isinstance(got, LlamaCompletion) and isinstance(got, Completion)


def test_greedy_is_deterministic_and_is_what_llama_cpp_generates(
    llm: LlamaCppLLM, llama_cpp: Any, model_path: Path
) -> None:
    first = llm.generate(CHAT, max_tokens=8, temperature=0.0)
    second = llm.generate(CHAT, max_tokens=8, temperature=0.0)
    assert (second.text, second.tokens, second.finish_reason) == (
        first.text,
        first.tokens,
        first.finish_reason,
    )
    assert first.tokens == 8 and first.finish_reason == "length"
    bare = bare_chat(bare_llama(llama_cpp, model_path, n_ctx=1024))
    assert first.text == bare["choices"][0]["message"]["content"]
    assert first.tokens == bare["usage"]["completion_tokens"]
    assert first.timings["prompt_tokens"] == bare["usage"]["prompt_tokens"]


def test_sampling_with_a_seed_is_reproducible(llm: LlamaCppLLM) -> None:
    runs = [llm.generate(CHAT, max_tokens=16, temperature=0.9) for _ in range(2)]
    assert runs[0].text == runs[1].text
    assert runs[0].tokens == runs[1].tokens == 16


def test_system_message_joins_the_first_user_turn(llm: LlamaCppLLM) -> None:
    # Gemma has no system role: its template puts the system text at the top of the first turn
    assert llm.template_source == "gemma3.jinja"  # the bundled GGUF carries no template
    chat: list[Any] = [{"role": m.role, "content": m.content} for m in CHAT]
    rendered = llm.formatter(messages=chat)
    assert rendered.prompt == (
        "<bos><start_of_turn>user\n"
        "You are a helpful assistant. Answer in one word.\n\n"
        "What colour is the sky on a clear day?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_conversation_the_template_rejects(llm: LlamaCppLLM) -> None:
    with pytest.raises(PromptError) as e:
        llm.generate([Message("user", "a"), Message("user", "b")], max_tokens=4, temperature=0.0)
    assert str(e.value) == (
        "the model's chat template rejected the conversation: "
        "Conversation roles must alternate user/assistant/user/assistant/..."
    )


def test_chat_template_option(llm: LlamaCppLLM) -> None:
    own = LlamaCppBackend().create(
        {
            **OPTS,
            "chat_template": "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}",
        }
    )
    assert own.model is llm.model and own.template_source == "option"
    with own.model.lock:
        tokens, stops = own.prompt(CHAT)
    text = own.model.llama.detokenize(tokens, special=True).decode()
    # as in create_chat_completion, a template emits bos_token itself: no BOS is added
    assert text == f"system: {SYSTEM}\nuser: {QUESTION}\n"
    assert stops == [b"<eos>"]
    with pytest.raises(PromptError, match=r"^the chat template does not compile: "):
        LlamaCppBackend().create({**OPTS, "chat_template": "{% for m in messages %}"})


def test_multi_turn(llm: LlamaCppLLM) -> None:
    chat = [*CHAT, Message("assistant", "Blue."), Message("user", "And at night?")]
    got = llm.generate(chat, max_tokens=4, temperature=0.0)
    assert 1 <= got.tokens <= 4


def test_grammar_constrains_the_answer(llm: LlamaCppLLM) -> None:
    chat = [Message("user", "Is the sky blue? Answer Y or N.")]
    for temperature in (0.0, 1.0):
        got = llm.generate(chat, max_tokens=8, temperature=temperature, grammar=YES_NO)
        assert got.text in {"Y", "N"}
        assert (got.tokens, got.finish_reason) == (1, "stop")


def test_grammar_compiled_once(llm: LlamaCppLLM) -> None:
    with llm.model.lock:
        assert llm.model.grammar(YES_NO) is llm.model.grammar(YES_NO)


def test_grammar_cache_keeps_the_newest(llm: LlamaCppLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(charter_llamacpp.llm, "_GRAMMAR_CACHE_SIZE", 2)
    with llm.model.lock:
        llm.model._grammars.clear()
        first = llm.model.grammar('root ::= "A"')
        llm.model.grammar('root ::= "B"')
        llm.model.grammar('root ::= "C"')
        assert list(llm.model._grammars) == ['root ::= "B"', 'root ::= "C"']
        assert llm.model.grammar('root ::= "A"') is not first


@pytest.mark.parametrize("grammar", ['root ::= "Y', 'start ::= "Y"', "root ::= answer", "   "])
def test_bad_grammar_is_an_error_not_a_crash(llm: LlamaCppLLM, grammar: str) -> None:
    with pytest.raises(GrammarError):
        llm.generate(CHAT, max_tokens=4, temperature=0.0, grammar=grammar)
    assert llm.generate(CHAT, max_tokens=2, temperature=0.0).tokens == 2


def test_stop_strings(llm: LlamaCppLLM) -> None:
    full = llm.generate(CHAT, max_tokens=8, temperature=0.0)
    stop = full.text[2:4]
    cut = llm.generate(CHAT, max_tokens=8, temperature=0.0, stop=[stop])
    assert cut.text == full.text[: full.text.index(stop)]
    assert cut.finish_reason == "stop"


def test_max_tokens_must_be_positive(llm: LlamaCppLLM) -> None:
    with pytest.raises(ValueError, match="max_tokens must be at least 1, got 0"):
        llm.generate(CHAT, max_tokens=0, temperature=0.0)
    with pytest.raises(PromptError, match="no messages to answer"):
        llm.generate([], max_tokens=1, temperature=0.0)


def test_no_logprobs_unless_asked(llm: LlamaCppLLM) -> None:
    got = llm.generate(CHAT, max_tokens=4, temperature=0.0)
    assert (got.logprobs, got.top_logprobs, got.entropies) == ((), (), ())
    assert got.mean_entropy is None and got.mean_top_entropy is None


def test_logprobs_one_per_token(llm_logprobs: LlamaCppLLM, llm: LlamaCppLLM) -> None:
    assert llm_logprobs.model is llm.model  # sampling options do not reload the model
    got = llm_logprobs.generate(CHAT, max_tokens=8, temperature=0.0)
    assert got.tokens == len(got.logprobs) == len(got.top_logprobs) == len(got.entropies) == 8
    assert got.text == llm.generate(CHAT, max_tokens=8, temperature=0.0).text
    for lp, top in zip(got.logprobs, got.top_logprobs, strict=True):
        assert len(top) == 5 and list(top) == sorted(top, reverse=True)
        assert lp == top[0]  # greedy: the chosen token is the most likely one
    assert got.mean_entropy is not None and got.mean_top_entropy is not None
    assert 0.0 <= got.mean_top_entropy <= got.mean_entropy


@pytest.mark.slow  # generates twice with the bundled model (about 6 s)
def test_logprobs_agree_with_llama_cpp_python(llama_cpp: Any, model_path: Path) -> None:
    # a model of its own: after other prompts, llama-cpp-python reuses the cached prefix and
    # evaluates the rest token by token, which moves logits by up to ~1e-2 (bare or not)
    fresh = LlamaCppBackend().create({"n_ctx": 768, "seed": 42, "logprobs": True})
    got = fresh.generate(CHAT, max_tokens=8, temperature=0.0)
    slow = bare_llama(llama_cpp, model_path, n_ctx=768, logits_all=True)
    bare = bare_chat(slow, logprobs=True, top_logprobs=1)
    assert got.text == bare["choices"][0]["message"]["content"]
    theirs = [t["logprob"] for t in bare["choices"][0]["logprobs"]["content"]]
    assert got.logprobs == pytest.approx(theirs, abs=1e-5)


def test_logprobs_measure_the_model_not_the_grammar(llm_logprobs: LlamaCppLLM) -> None:
    chat = [Message("user", "Is the sky blue? Answer Y or N.")]
    got = llm_logprobs.generate(chat, max_tokens=4, temperature=0.0, grammar=YES_NO)
    assert got.tokens == len(got.logprobs) == 1
    assert got.logprobs[0] < 0.0  # the raw distribution spreads over other tokens too


def test_timings(llm: LlamaCppLLM) -> None:
    got = llm.generate(CHAT, max_tokens=8, temperature=0.0)
    t = got.timings
    assert sorted(t) == ["generation_ms", "prompt_ms", "prompt_tokens", "tokens_per_s", "total_ms"]
    assert t["prompt_tokens"] == 31.0
    assert t["total_ms"] == pytest.approx(t["prompt_ms"] + t["generation_ms"])
    assert t["tokens_per_s"] == pytest.approx(7 / (t["generation_ms"] / 1000))


def test_four_threads_share_one_model(llm: LlamaCppLLM) -> None:
    expected = llm.generate(CHAT, max_tokens=8, temperature=0.0).text
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda _: llm.generate(CHAT, max_tokens=8, temperature=0.0), range(4))
        )
    assert [r.text for r in results] == [expected] * 4
