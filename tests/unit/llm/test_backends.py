"""The built-in plugin ``charter.llm.backends``: what it registers, that registering stays
cheap, and that the example in docs/plugins.md runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from charter.config.settings import PluginSettings
from charter.contracts.models import LLMBackend
from charter.llm.backends import OpenAIBackend, ScriptedBackend
from charter.plugins.host import BUILTIN_PLUGINS, make_host

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"


def test_the_builtin_registers_openai_and_scripted() -> None:
    assert "charter.llm.backends" in BUILTIN_PLUGINS
    host = make_host(PluginSettings(autoload=False))
    assert host.diagnostics == []
    assert host.infos["charter.llm.backends"].hooks == {
        "charter_register_llm_backends": ["openai", "scripted"]
    }
    backends = host.registry.llm_backends
    assert isinstance(backends["openai"], OpenAIBackend)
    assert isinstance(backends["scripted"], ScriptedBackend)
    assert all(isinstance(b, LLMBackend) for b in backends.values())


def test_registering_does_not_load_a_backend() -> None:
    code = (
        "import sys\n"
        "from charter.plugins.host import make_host\n"
        "from charter.config.settings import PluginSettings\n"
        "make_host(PluginSettings(autoload=False))\n"
        "print(sorted(m for m in sys.modules if m in "
        "('charter.llm.openai', 'charter.llm.scripted', 'urllib.request')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_the_docs_example_runs() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### charter_register_llm_backends") :]
    section = section[: section.index("\n### ")]
    (block,) = [
        b for b in re.findall(r"```python\n(.*?)```", section, flags=re.S) if "scripted" in b
    ]
    exec(compile(block, "plugins.md:scripted", "exec"), {})
