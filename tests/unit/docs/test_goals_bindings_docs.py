"""docs/goals.md's skill-binding fragments are the shipped packs': each ``yaml`` block whose first
line names a pack's goals.yaml (``# domains/<pack>/goals.yaml: …``) lists intents cut down to
some of their keys, and each key shown is the pack's own (a slot by its name); the packs they
come from validate and their tests — planner, skill and conversation tests — pass (the
stages and moves of §1 among them)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from charter.cli.main import main
from tests.unit.docs import pages

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "goals.md"
NAMED = re.compile(r"# (domains/[a-z]+/goals\.yaml)\b")


def fragments() -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    for info, text in pages.blocks(DOC):
        named = NAMED.match(text)
        if info == "yaml" and named is not None and isinstance(yaml.safe_load(text), list):
            out.append((named[1], yaml.safe_load(text)))
    return out


FRAGMENTS = fragments()


def test_the_page_shows_bindings_of_two_packs() -> None:
    assert sorted(path for path, _ in FRAGMENTS) == [
        "domains/ecommerce/goals.yaml",
        "domains/finance/goals.yaml",
        "domains/medical/goals.yaml",
    ]
    keys = {k for _, intents in FRAGMENTS for i in intents for k in i.get("skill", {})}
    assert {"keep", "done", "moves"} <= keys
    staged = {s["id"] for _, intents in FRAGMENTS for i in intents for s in i.get("stages", [])}
    assert {"intake", "triage", "referral", "compliance"} <= staged


@pytest.mark.parametrize(("path", "intents"), FRAGMENTS, ids=[p for p, _ in FRAGMENTS])
def test_each_key_shown_is_the_packs(path: str, intents: list[dict[str, Any]]) -> None:
    shipped = {i["id"]: i for i in yaml.safe_load((ROOT / path).read_text("utf-8"))["intents"]}
    for intent in intents:
        theirs = shipped[intent["id"]]
        for key, value in intent.items():
            if key == "slots":
                by_name = {s["name"]: s for s in theirs["slots"]}
                for slot in value:
                    assert slot == by_name[slot["name"]], (intent["id"], slot["name"])
            else:
                assert value == theirs[key], (intent["id"], key)


@pytest.mark.slow  # plays a shipped pack's conversations (4-9 s)
@pytest.mark.parametrize("path", sorted({p for p, _ in FRAGMENTS}))
def test_the_pack_validates_and_its_tests_pass(
    path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARTER_NO_CACHE", "1")
    pack = str(ROOT / Path(path).parent)
    assert main(["validate", "--strict", pack]) == 0, capsys.readouterr().out
    code = main(["test", pack])
    out = capsys.readouterr().out
    assert code == 0, out
    assert re.search(r"^[1-9][0-9]* passed, 0 failed$", out, flags=re.M), out
