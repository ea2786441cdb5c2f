"""The case files of the ablation (seed 001 §5.4, ``charter health --ablation``): read and
checked here, every problem reported at once at its file:line:col (``AblationError``); played by
``charter.health.ablation_play``, in the five configurations of ``charter.health.ablation``. The
comment atop ``ablation/*.yaml`` describes the format: ``pack``, then ``cases``, each with a
``name``, optional ``needs`` (memory, reflection, skills), ``sessions`` (lists of turns
``{user, model}``, one user per case) and ``success`` on the last reply (``contains``,
``not_contains``, ``matches``, ``passes_rules``, true by default).

A turn's ``model`` (omitted when the model is never asked): a text, every time; a list, in
order, the last repeated; or regular expressions searched in the prompt's user message
(【关联记忆】, 【技能结果】, 【近期对话】, 【修改要求】, the question) mapped to a text
(every match) or a list (in order, once each); answers may be ``{text, logprobs, tokens}``
(``charter.llm.scripted``; ``scripted`` makes the backend of one turn).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from charter.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Location,
    did_you_mean,
    error,
    sort_diagnostics,
)
from charter.llm.scripted import ScriptedLLM
from charter.pack.loader import display_path
from charter.pack.yamlsrc import LocatedDoc, Pointer, load_yaml

COMPONENTS: tuple[str, ...] = ("memory", "reflection", "skills")
_FILE_KEYS = ("pack", "cases")
_CASE_KEYS = ("name", "needs", "sessions", "success")
_TURN_KEYS = ("user", "model")
_SUCCESS_KEYS = ("contains", "not_contains", "matches", "passes_rules")


class AblationError(DiagnosticError):
    """Case files that cannot be played: every problem found, each with its location."""


@dataclass(frozen=True)
class Success:
    """What the last reply must do: hold every ``contains``, none of ``not_contains``, match
    ``matches`` (``re.search``), and pass the pack's rules when ``passes_rules``."""

    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    matches: str | None = None
    passes_rules: bool = True

    def missed(self, text: str) -> list[str]:
        """Why ``text`` fails the text criteria (empty when it meets them)."""
        why = [f"lacks {w!r}" for w in self.contains if w not in text]
        why += [f"contains {w!r}" for w in self.not_contains if w in text]
        if self.matches is not None and re.search(self.matches, text) is None:
            why.append(f"does not match /{self.matches}/")
        return why


@dataclass(frozen=True)
class Turn:
    user: str
    model: Any = None  # as written: None, a text, a list or a mapping (see the module doc)


@dataclass(frozen=True)
class Case:
    name: str
    sessions: tuple[tuple[Turn, ...], ...]
    success: Success
    needs: tuple[str, ...] | None = None
    line: int = 0


@dataclass(frozen=True)
class CaseFile:
    path: str  # as shown: relative to the working directory when below it
    pack: str  # as written
    pack_root: Path
    cases: tuple[Case, ...] = field(default=())


def scripted(model: Any) -> ScriptedLLM:
    """The ``ScriptedLLM`` of a turn's ``model`` (ValueError when it is malformed)."""
    if model is None:
        return ScriptedLLM([])  # asked anyway: "all 0 answers were used"
    if isinstance(model, str):
        return ScriptedLLM([model], default=model)
    if isinstance(model, list) and model:
        return ScriptedLLM(model, default=model[-1])
    if isinstance(model, Mapping) and model:
        return ScriptedLLM(script=model)
    raise ValueError(
        "model must be a text, a non-empty list of answers or a non-empty mapping of "
        f"patterns to answers, not {_kind(model)}"
    )


def case_paths(paths: Sequence[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """The files to read: a file as given, a directory's ``*.yaml`` and ``*.yml`` by name."""
    found: list[Path] = []
    diags: list[Diagnostic] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
            if not inside:
                where = Location(display_path(path))
                diags.append(error("CH004", "no case files (*.yaml) in this directory", where))
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            where = Location(display_path(path))
            diags.append(error("CH004", "no such case file or directory", where))
    return found, diags


def load_case_files(
    paths: Sequence[Path], packs: Mapping[str, Path] | None = None
) -> list[CaseFile]:
    """Every case file under ``paths``, checked; AblationError listing every problem."""
    files, diags = case_paths(paths)
    loaded: list[CaseFile] = []
    for path in files:
        doc, problems = load_yaml(path)
        diags += problems
        if doc is None or any(d.is_error for d in problems):
            continue
        reader = _Reader(doc, path, packs)
        made = reader.file()
        diags += reader.diags
        if made is not None and not reader.diags:
            loaded.append(made)
    if any(d.is_error for d in diags):
        raise AblationError(sort_diagnostics(diags))
    return loaded


class _Reader:
    """One loaded file, checked node by node; problems collected in ``diags``."""

    def __init__(self, doc: LocatedDoc, path: Path, packs: Mapping[str, Path] | None) -> None:
        self.doc, self.path, self.packs = doc, path, packs
        self.diags: list[Diagnostic] = []

    def bad(
        self, code: str, message: str, ptr: Pointer, *, key: bool = False, hint: str = ""
    ) -> None:
        where = self.doc.key_loc(ptr) if key else self.doc.loc(ptr)
        self.diags.append(error(code, message, where, hint))

    def mapping(self, value: Any, ptr: Pointer, what: str, keys: Sequence[str]) -> bool:
        if not isinstance(value, dict):
            self.bad("CH010", f"{what} must be a mapping, not {_kind(value)}", ptr)
            return False
        for k in value:
            if k not in keys:
                hint = did_you_mean(str(k), keys)
                self.bad("CH012", f"unknown key {k!r} in {what}", (*ptr, k), key=True, hint=hint)
        return True

    def text(self, value: Any, ptr: Pointer, what: str) -> str | None:
        if not isinstance(value, str) or not value.strip():
            self.bad("CH010", f"{what} must be a non-empty text, not {_kind(value)}", ptr)
            return None
        return value

    def required(self, data: dict[str, Any], key: str, ptr: Pointer, what: str) -> bool:
        if key not in data:
            self.bad("CH011", f"{what} needs {key!r}", ptr)
            return False
        return True

    def file(self) -> CaseFile | None:
        data = self.doc.data
        if not self.mapping(data, (), "a case file", _FILE_KEYS):
            return None
        root = self._pack(data)
        cases: list[Case] = []
        if self.required(data, "cases", (), "a case file"):
            items = data["cases"]
            if not isinstance(items, list) or not items:
                self.bad("CH010", f"cases must be a non-empty list, not {_kind(items)}", ("cases",))
            else:
                names: set[str] = set()
                for i, item in enumerate(items):
                    case = self._case(item, ("cases", i))
                    if case is None:
                        continue
                    if case.name in names:
                        message = f"case {case.name!r} is defined twice in this file"
                        self.bad("CH013", message, ("cases", i, "name"))
                    names.add(case.name)
                    cases.append(case)
        if root is None:
            return None
        return CaseFile(display_path(self.path), str(data["pack"]), root, tuple(cases))

    def _pack(self, data: dict[str, Any]) -> Path | None:
        if not self.required(data, "pack", (), "a case file"):
            return None
        name = self.text(data["pack"], ("pack",), "pack")
        if name is None:
            return None
        beside = self.path.parent / name
        if (beside / "pack.yaml").is_file():
            return beside
        from charter.pack.resolve import AmbiguousPack, resolve_domain

        try:
            root = resolve_domain(name, self.packs)
        except AmbiguousPack as exc:
            self.bad("CH009", exc.message, ("pack",), hint=exc.hint)
            return None
        if root is None:
            message = (
                f"unknown pack {name!r}: neither a pack directory relative to this file nor "
                "a pack name under domains/ or installed by a plugin"
            )
            self.bad("CH013", message, ("pack",))
        return root

    def _case(self, item: Any, ptr: Pointer) -> Case | None:
        before = len(self.diags)
        if not self.mapping(item, ptr, "a case", _CASE_KEYS):
            return None
        for key in ("name", "sessions", "success"):
            self.required(item, key, ptr, "a case")
        name = self.text(item["name"], (*ptr, "name"), "a case's name") if "name" in item else None
        needs = self._needs(item["needs"], (*ptr, "needs")) if "needs" in item else None
        sessions = (
            self._sessions(item["sessions"], (*ptr, "sessions")) if "sessions" in item else None
        )
        success = self._success(item["success"], (*ptr, "success")) if "success" in item else None
        if len(self.diags) > before or name is None or sessions is None or success is None:
            return None
        return Case(name, sessions, success, needs, self.doc.loc(ptr).line)

    def _needs(self, value: Any, ptr: Pointer) -> tuple[str, ...] | None:
        if not isinstance(value, list):
            self.bad("CH010", f"needs must be a list of components, not {_kind(value)}", ptr)
            return None
        out: list[str] = []
        for i, v in enumerate(value):
            if v not in COMPONENTS:
                hint = did_you_mean(str(v), COMPONENTS)
                self.bad("CH013", f"unknown component {v!r}", (*ptr, i), hint=hint)
            elif v in out:
                self.bad("CH013", f"component {v!r} is listed twice", (*ptr, i))
            else:
                out.append(v)
        return tuple(c for c in COMPONENTS if c in out)

    def _sessions(self, value: Any, ptr: Pointer) -> tuple[tuple[Turn, ...], ...] | None:
        if not isinstance(value, list) or not value:
            self.bad("CH010", f"sessions must be a non-empty list, not {_kind(value)}", ptr)
            return None
        sessions: list[tuple[Turn, ...]] = []
        for s, session in enumerate(value):
            if not isinstance(session, list) or not session:
                message = f"a session must be a non-empty list of turns, not {_kind(session)}"
                self.bad("CH010", message, (*ptr, s))
                continue
            turns = [self._turn(t, (*ptr, s, i)) for i, t in enumerate(session)]
            sessions.append(tuple(t for t in turns if t is not None))
        return tuple(sessions)

    def _turn(self, value: Any, ptr: Pointer) -> Turn | None:
        if not self.mapping(value, ptr, "a turn", _TURN_KEYS):
            return None
        if not self.required(value, "user", ptr, "a turn"):
            return None
        user = self.text(value["user"], (*ptr, "user"), "user")
        model = value.get("model")
        if "model" in value:
            try:
                scripted(model)
            except ValueError as exc:
                self.bad("CH013", str(exc).removeprefix("scripted backend: "), (*ptr, "model"))
                return None
        return None if user is None else Turn(user, model)

    def _success(self, value: Any, ptr: Pointer) -> Success | None:
        if not self.mapping(value, ptr, "success", _SUCCESS_KEYS):
            return None
        ok = True
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("contains", "not_contains"):
            got = value.get(key, [])
            got = [got] if isinstance(got, str) else got
            if not isinstance(got, list) or not all(isinstance(w, str) and w for w in got):
                message = f"{key} must be a text or a list of non-empty texts"
                self.bad("CH010", message, (*ptr, key))
                ok = False
            else:
                lists[key] = tuple(got)
        matches = value.get("matches")
        if matches is not None:
            ok = self._pattern(matches, (*ptr, "matches")) and ok
        passes = value.get("passes_rules", True)
        if not isinstance(passes, bool):
            message = f"passes_rules must be true or false, not {_kind(passes)}"
            self.bad("CH010", message, (*ptr, "passes_rules"))
            ok = False
        if not ok:
            return None
        return Success(lists["contains"], lists["not_contains"], matches, passes)

    def _pattern(self, value: Any, ptr: Pointer) -> bool:
        if not isinstance(value, str) or not value:
            self.bad("CH010", f"matches must be a regular expression, not {_kind(value)}", ptr)
            return False
        try:
            re.compile(value)
        except re.error as exc:
            self.bad("CH013", f"matches is not a regular expression: {exc}", ptr)
            return False
        return True


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, str):
        return "an empty text" if not value.strip() else f"the text {value!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    return repr(value)
