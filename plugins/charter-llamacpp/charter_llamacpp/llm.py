"""The ``llamacpp`` LLM: one llama.cpp model per process and configuration, shared by threads.

Generation drives ``Llama.generate`` (the token loop under ``create_chat_completion``) directly
rather than going through ``create_chat_completion``, for two reasons measured on Gemma 3,
whose vocabulary has 262,144 tokens:

* ``create_chat_completion(logprobs=...)`` needs ``logits_all=True``, which copies a 1 MB row of
  logits out of llama.cpp for every *prompt* token, and then sorts each generated token's whole
  vocabulary in Python. Reading the row the sampler just used (``llama_get_logits_ith(ctx,
  -1)``) and reducing it with numpy gives the same numbers at no prompt cost;
* only the token loop knows the generated token ids, so ``Completion.tokens`` and the logprobs
  line up exactly, and it knows when the first token arrived (``prompt_ms``).

The prompt is rendered the way ``create_chat_completion`` renders a GGUF's template
(llama-cpp-python's ``Jinja2ChatFormatter``), from the first of: the ``chat_template`` option;
the GGUF's ``tokenizer.chat_template``; for a Gemma GGUF without one, Gemma 3's published
template (``templates/gemma3.jinja``). The bundled model is the *base* Gemma 3 270M and carries
no template, and llama-cpp-python would then fall back to Llama 2's ``[INST]`` format, which
Gemma never saw. Gemma has no system role: its template puts a system message at the top of
the first user turn. At temperature 0 the text equals ``create_chat_completion``'s given the
same template (the tests pin it).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from charter.contracts.models import Completion, Message
from charter_llamacpp.errors import BackendUnavailable, GrammarError, ModelFileError, PromptError
from charter_llamacpp.logprobs import TokenStats, mean_entropy, token_stats
from charter_llamacpp.model_cache import ensure_default_model
from charter_llamacpp.options import LlamaOptions

_GGUF_MAGIC = b"GGUF"
_TEMPLATES = Path(__file__).parent / "templates"
# packs compile a handful of grammars; a caller building one per turn must not grow memory
_GRAMMAR_CACHE_SIZE = 128


@dataclass(frozen=True)
class LlamaCompletion(Completion):
    """A ``Completion`` with what only this backend knows.

    ``timings`` (all floats): ``prompt_ms`` — from the call until the first generated token
    (template, tokenisation, prompt evaluation, first sample); ``generation_ms`` — from the first
    token to the end; ``total_ms``; ``prompt_tokens``; ``tokens_per_s`` — the decoding rate,
    ``(tokens - 1) / generation``, 0 with fewer than two tokens.

    With the ``logprobs`` option: ``logprobs[i]`` is the natural-log probability of the i-th
    generated token under the model's raw distribution (before temperature, top-k/p and grammar);
    ``top_logprobs[i]`` the ``top_logprobs`` largest logprobs at that step, descending;
    ``entropies[i]`` that step's full-vocabulary entropy in nats.
    ``finish_reason``: ``stop`` (end of turn, a stop string, or the grammar completed) or
    ``length`` (max_tokens, or the context window filled up).
    """

    top_logprobs: tuple[tuple[float, ...], ...] = ()
    entropies: tuple[float, ...] = ()
    finish_reason: str = ""

    @property
    def mean_entropy(self) -> float | None:
        """Mean full-vocabulary entropy per token (nats); None without logprobs or tokens."""
        if not self.entropies:
            return None
        return sum(self.entropies) / len(self.entropies)

    @property
    def mean_top_entropy(self) -> float | None:
        """``logprobs.mean_entropy`` over ``top_logprobs`` (a lower bound of ``mean_entropy``)."""
        return mean_entropy(self.top_logprobs)


def import_llama_cpp() -> ModuleType:
    try:
        import llama_cpp
    except ImportError as e:
        raise BackendUnavailable(
            "the llamacpp backend needs llama-cpp-python: pip install llama-cpp-python "
            "(it compiles llama.cpp, about 6 minutes on 2 cores)"
        ) from e
    return llama_cpp


def check_gguf(path: Path) -> None:
    """A ModelFileError saying what is wrong, before llama.cpp's own less helpful failure."""
    if not path.exists():
        raise ModelFileError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelFileError(f"model path is not a file: {path}")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ModelFileError(f"cannot read the model file {path}: {e.strerror or e}") from e
    if magic != _GGUF_MAGIC:
        raise ModelFileError(f"not a GGUF model file (it does not start with 'GGUF'): {path}")


class LoadedModel:
    """One ``llama_cpp.Llama`` with its grammar cache and the lock that serialises every use of
    its context (llama.cpp contexts are not thread-safe)."""

    def __init__(self, path: Path, opts: LlamaOptions) -> None:
        llama_cpp = import_llama_cpp()
        check_gguf(path)
        started = time.perf_counter()
        log = io.StringIO()
        try:
            # llama-cpp-python prints some of llama.cpp's log lines even with verbose=False;
            # kept, they explain a failed load
            quiet = (
                contextlib.redirect_stderr(log) if not opts.verbose else contextlib.nullcontext()
            )
            with quiet:
                self.llama: Any = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=opts.n_ctx,
                    n_batch=opts.n_batch,
                    n_threads=opts.n_threads,
                    verbose=opts.verbose,
                )
        except (ValueError, RuntimeError, OSError) as e:
            detail = " ".join(log.getvalue().split())[-300:]
            raise ModelFileError(
                f"llama.cpp could not load {path}: {e}" + (f" ({detail})" if detail else "")
            ) from e
        self.load_ms = (time.perf_counter() - started) * 1000.0
        self.path = path
        self.lock = threading.Lock()
        self._llama_cpp = llama_cpp
        self._grammars: dict[str, Any] = {}
        self._vocab = llama_cpp.llama_model_get_vocab(self.llama.model)
        self.n_vocab = int(self.llama.n_vocab())
        # llama.cpp raises a small n_ctx to its minimum (256) but llama-cpp-python sizes its token
        # buffer by the requested one: the smaller is the real limit
        self.n_ctx = min(int(self.llama.n_ctx()), opts.n_ctx)
        metadata: dict[str, str] = self.llama.metadata
        self.template: str | None = metadata.get("tokenizer.chat_template") or None
        self.template_source = "gguf"
        if self.template is None and metadata.get("general.architecture", "").startswith("gemma"):
            self.template = (_TEMPLATES / "gemma3.jinja").read_text(encoding="utf-8")
            self.template_source = "gemma3.jinja"
        self.eos, self.bos = int(self.llama.token_eos()), int(self.llama.token_bos())

    def token_text(self, token: int) -> str:
        if token == -1:
            return ""
        raw: bytes = self.llama.detokenize([token], special=True)
        return raw.decode("utf-8", errors="ignore")

    def grammar(self, text: str) -> Any:
        """The ``LlamaGrammar`` for a GBNF text, checked once and cached by text (the 128 most
        recently added). Call with ``lock`` held.

        ``LlamaGrammar.from_string`` only stores the text, and llama.cpp crashes on a sampler
        chain given the null sampler a bad grammar yields; so the text is parsed here first,
        once, and a bad one is a GrammarError instead."""
        cached = self._grammars.get(text)
        if cached is not None:
            return cached
        if not text.strip():
            raise GrammarError("the grammar is empty")
        from llama_cpp.llama_grammar import LlamaGrammar

        sampler = self._llama_cpp.llama_sampler_init_grammar(
            self._vocab, text.encode("utf-8"), b"root"
        )
        if not sampler:
            raise GrammarError(
                "llama.cpp could not parse the GBNF grammar (it needs a 'root' rule; see "
                f"llama.cpp's grammars/README.md): {text[:200]!r}"
            )
        self._llama_cpp.llama_sampler_free(sampler)
        compiled = LlamaGrammar.from_string(text, verbose=False)
        if len(self._grammars) >= _GRAMMAR_CACHE_SIZE:
            del self._grammars[next(iter(self._grammars))]  # the oldest
        self._grammars[text] = compiled
        return compiled

    def last_logits(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The logits the sampler used for the token just yielded: the context's last output
        row (valid until the next evaluation). Call with ``lock`` held."""
        ptr = self._llama_cpp.llama_get_logits_ith(self.llama.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def is_eog(self, token: int) -> bool:
        return bool(self._llama_cpp.llama_vocab_is_eog(self._vocab, token))


def _first_stop(data: bytes, stops: Sequence[bytes]) -> int:
    hits = [i for i in (data.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else -1


class LlamaCppLLM:
    """An ``LLM`` over a shared ``LoadedModel``, with this configuration's chat template and
    sampling options."""

    def __init__(self, model: LoadedModel, opts: LlamaOptions) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.model = model
        self.options = opts
        template = opts.chat_template or model.template
        if template is None:
            raise ModelFileError(
                f"{model.path} has no chat template (GGUF key tokenizer.chat_template): "
                "set the option chat_template"
            )
        self.template_source = "option" if opts.chat_template else model.template_source
        try:
            self.formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_text(model.eos),
                bos_token=model.token_text(model.bos),
                stop_token_ids=[model.eos] if model.eos != -1 else None,
            )
        except Exception as e:  # a jinja2 syntax error in the chat_template option
            raise PromptError(f"the chat template does not compile: {e}") from e

    def prompt(self, messages: Sequence[Message]) -> tuple[list[int], list[bytes]]:
        """The prompt's tokens and the template's stop strings. Call with the model's lock."""
        # llama-cpp-python types messages as a union of TypedDicts, one per role
        chat: list[Any] = [{"role": m.role, "content": m.content} for m in messages]
        try:
            rendered = self.formatter(messages=chat)
        except Exception as e:  # jinja2 errors and the template's raise_exception
            raise PromptError(f"the model's chat template rejected the conversation: {e}") from e
        tokens: list[int] = self.model.llama.tokenize(
            rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
        )
        stops = rendered.stop
        stop_list = [stops] if isinstance(stops, str) else list(stops or ())
        return tokens, [s.encode("utf-8") for s in stop_list if s]

    def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        grammar: str | None = None,
    ) -> LlamaCompletion:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be at least 0, got {temperature}")
        if not messages:
            raise PromptError("no messages to answer")
        m, o = self.model, self.options
        with m.lock:
            started = time.perf_counter()
            compiled = m.grammar(grammar) if grammar is not None else None
            prompt, template_stops = self.prompt(messages)
            room = m.n_ctx - len(prompt)
            if room < 1:
                raise PromptError(
                    f"the prompt has {len(prompt)} tokens, the context window {m.n_ctx}: "
                    "shorten the prompt or raise the option n_ctx"
                )
            limit = min(max_tokens, room)
            stops = [s.encode("utf-8") for s in stop if s] + template_stops
            m.llama.set_seed(o.seed if o.seed is not None else random.getrandbits(32))
            ids: list[int] = []
            stats: list[TokenStats] = []
            data = b""
            first_at: float | None = None
            finish = "length"
            tokens = m.llama.generate(
                prompt,
                top_k=o.top_k,
                top_p=o.top_p,
                min_p=o.min_p,
                typical_p=1.0,
                temp=temperature,
                repeat_penalty=o.repeat_penalty,
                grammar=compiled,
            )
            with contextlib.closing(tokens):
                for token in tokens:
                    if first_at is None:
                        first_at = time.perf_counter()
                    if m.is_eog(token):
                        finish = "stop"
                        break
                    if o.logprobs:
                        stats.append(token_stats(m.last_logits(), token, o.top_logprobs))
                    ids.append(token)
                    data += m.llama.detokenize([token])
                    cut = _first_stop(data, stops) if stops else -1
                    if cut >= 0:
                        data, finish = data[:cut], "stop"
                        break
                    if len(ids) >= limit:
                        break
            ended = time.perf_counter()
        first = first_at if first_at is not None else ended
        generation_s = ended - first
        timings = {
            "prompt_ms": (first - started) * 1000.0,
            "generation_ms": generation_s * 1000.0,
            "total_ms": (ended - started) * 1000.0,
            "prompt_tokens": float(len(prompt)),
            "tokens_per_s": (len(ids) - 1) / generation_s
            if len(ids) > 1 and generation_s > 0
            else 0.0,
        }
        return LlamaCompletion(
            text=data.decode("utf-8", errors="ignore"),
            tokens=len(ids),
            logprobs=tuple(s.logprob for s in stats),
            timings=timings,
            top_logprobs=tuple(s.top for s in stats),
            entropies=tuple(s.entropy for s in stats),
            finish_reason=finish,
        )


_models: dict[tuple[Path, int, int | None, int, bool], LoadedModel] = {}
_llms: dict[LlamaOptions, LlamaCppLLM] = {}
# held while loading too: two threads asking for the same model must not load it twice
_registry_lock = threading.Lock()


def get_llm(opts: LlamaOptions) -> LlamaCppLLM:
    """The process's ``LlamaCppLLM`` for these options: the model file is loaded once per
    (path, n_ctx, n_threads, n_batch, verbose), shared by configurations differing only in
    sampling options."""
    with _registry_lock:
        llm = _llms.get(opts)
        if llm is not None:
            return llm
        path = opts.model_path if opts.model_path is not None else ensure_default_model().path
        key = (path, opts.n_ctx, opts.n_threads, opts.n_batch, opts.verbose)
        model = _models.get(key)
        if model is None:
            model = _models[key] = LoadedModel(path, opts)
        llm = _llms[opts] = LlamaCppLLM(model, opts)
        return llm


@atexit.register
def _close_models() -> None:
    # freed while the interpreter still works: Llama.__del__ during module teardown prints
    # "Exception ignored ... 'NoneType' object is not callable"
    with _registry_lock:
        for model in _models.values():
            model.llama.close()
        _models.clear()
        _llms.clear()


def loaded_models() -> Mapping[tuple[Path, int, int | None, int, bool], LoadedModel]:
    """The models this process loaded (read-only view, for diagnostics and tests)."""
    return dict(_models)
