"""Reading settings by their rows of the table (``charter.config.specs``): a value of the file or
of a variable, its type and its check, the problem when it is rejected, and where each value
that is accepted came from.

Messages are written here and in the table rather than taken from a validator (pydantic's name
the model's fields, not the file's keys, and quote the input, which may be a secret): each
names the dotted key or the variable and what is expected. Every secret text met on the way is
kept in ``redact`` so that a renderer can mask it in the lines it quotes.

``charter.config.load`` reads every table with a ``Reader`` (and the keys no row describes:
secrets, tenants, backend options); ``charter.config.settings`` reads ``[plugins]`` alone with
one, early and cheaply, for the plugin host.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from charter.config.specs import ENV_LOCATION, SPECS, WORDING, Kind, Spec, env_name
from charter.config.toml import ConfigFile
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.text.masking import url_password, url_secrets

EXPECTED = {
    "str": "a string",
    "int": "an integer",
    "number": "a number",
    "bool": "true or false",
    "names": "an array of strings",
}


def type_of(value: Any) -> str:
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "a table" if isinstance(value, dict) else "a date or time"


def fits(kind: Kind, value: Any) -> bool:
    if kind == "names":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return isinstance(value, {"str": str, "int": int, "number": int | float}[kind])


def unquote_hint(kind: Kind, value: Any) -> str:
    # the usual mistake is a quoted number or boolean
    if isinstance(value, str) and (
        (kind == "bool" and value in ("true", "false"))
        or (kind in ("int", "number") and re.fullmatch(r"-?\d+(\.\d+)?", value))
    ):
        return f"write {value} without quotes"
    return ""


def file_keys(section: str) -> list[str]:
    """The keys a table of the file may hold by the table's rows."""
    return [key for key, spec in SPECS[section].items() if spec.in_file]


class Reader:
    """Values by table and key, where each came from, the problems, the secrets seen."""

    def __init__(self, file: ConfigFile | None, env: Mapping[str, str]) -> None:
        self.file, self.env = file, env
        self.values: dict[str, dict[str, Any]] = {s: {} for s in SPECS}
        self.origins: dict[str, Location | str] = {}
        self.diags: list[Diagnostic] = []
        self.redact: list[str] = []

    def loc(self, *key: str | int) -> Location:
        return self.file.locate(key) if self.file else ENV_LOCATION

    def wrong_type(
        self, dotted: str, expected: str, value: Any, loc: Location, hint: str = ""
    ) -> None:
        message = f"{dotted} must be {expected}, not {type_of(value)}"
        self.diags.append(error("CH402", message, loc, hint))

    def read_table(self, section: str, table: Any) -> None:
        """One table of the file, ``section`` being one of the table of settings'."""
        loc = self.loc(section)
        if not isinstance(table, Mapping):
            words = WORDING.get(section)
            if words is not None:
                self.diags.append(error(words.code, words.not_a_table, loc))
            else:
                hint = f"write [{section}] and its settings"
                self.wrong_type(section, "a table", table, loc, hint)
            return
        for key, value in table.items():
            self.read_key(section, key, value)

    def read_key(self, section: str, key: str, value: Any) -> None:
        """A key of a table: its row's, else unknown (``load`` adds the keys no row has)."""
        self.read_setting(section, key, value, self.loc(section, key))

    def unknown(self, section: str, key: str, loc: Location, known: Iterable[str] = ()) -> None:
        known = [*file_keys(section), *known]
        words = WORDING.get(section)
        if words is None:
            hint = did_you_mean(key, known)
            message = f"unknown setting '{section}.{key}' (ignored)"
            self.diags.append(warning("CH401", message, loc, hint))
        else:
            hint = did_you_mean(key, known) or f"known settings: {', '.join(known)}"
            self.diags.append(warning(words.code, words.unknown.format(key=key), loc, hint))

    def read_setting(self, section: str, key: str, value: Any, loc: Location) -> None:
        spec = SPECS[section].get(key)
        dotted = f"{section}.{key}"
        if spec is None or not spec.in_file:
            self.unknown(section, key, loc)
        elif not fits(spec.kind, value):
            hint = unquote_hint(spec.kind, value)
            problem = spec.wrong_type(dotted, value) if spec.wrong_type else None
            if problem is None:
                self.wrong_type(dotted, EXPECTED[spec.kind], value, loc, hint)
            else:
                self.diags.append(error(problem[0], problem[1], loc, problem[2] or hint))
        else:
            self.accept(section, key, value, dotted, loc)

    def accept(
        self, section: str, key: str, value: Any, subject: str, origin: Location | str
    ) -> None:
        """A value of the right kind, from the file (``origin`` its location) or a variable
        (``origin`` ``env NAME``): kept when its check passes, else reported."""
        spec = SPECS[section][key]
        hidden = url_secrets(value) if isinstance(value, str) else []
        self.redact.extend(hidden)
        problem = spec.check(subject, value) if spec.check else None
        if problem is not None:
            code, message, hint = problem
            if spec.check is env_name:
                self.redact.append(value)
            loc = origin if isinstance(origin, Location) else ENV_LOCATION
            self.diags.append(error(code, message, loc, hint))
            return
        self.values[section][key] = _typed(spec, value)
        self.origins[f"{section}.{key}"] = origin
        if isinstance(origin, Location) and hidden:
            what = "a password" if url_password(value) else "a secret in its parameters"
            self.diags.append(
                warning(
                    "CH406",
                    f"{section}.{key} contains {what}",
                    origin,
                    f"set the whole URL in ${spec.env} instead",
                )
            )

    def read_env(self, sections: Iterable[str] = SPECS) -> None:
        """The variables of these tables' rows, over the file; an empty one counts as unset."""
        for section in sections:
            for key, spec in SPECS[section].items():
                text = self.env.get(spec.env, "").strip() if spec.env else ""
                if not text:
                    continue
                value = spec.env_value(text) if spec.env_value else text
                if value is not None:
                    self.accept(section, key, value, str(spec.env), f"env {spec.env}")


def _typed(spec: Spec, value: Any) -> Any:
    if spec.kind == "number":
        return float(value)
    if spec.kind == "names":
        return frozenset(value)
    return value
