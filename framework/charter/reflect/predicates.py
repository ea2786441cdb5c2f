"""DSL predicates over model text, installed by ``charter.plugins.builtin``: the checks of
``charter.reflect.degenerate`` for pack authors.

* ``echoes(output, <value>)``: the subject repeats a piece of at least ``ECHO_MIN`` characters
  of the texts at the value path (a string, a list of strings, or mappings with a ``text``,
  ``content``, ``value`` or ``summary``, such as prompt messages);
* ``repetitive(output)``: a unit or a sentence written three or more times in a row;
* ``off_language(output, "zh-CN")``: fewer than half of the letters are in the locale's script
  (false for a locale ``charter.reflect.degenerate.SCRIPTS`` does not know);
* ``no_content(output)``: no letter, digit or Han character at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from charter.contracts.rules import ArgKind, Predicate

# each check imports charter.reflect.degenerate when it is called: registering the predicates
# (every command that loads plugins) should not compile its thirty-odd patterns


class Echoes:
    name: str = "echoes"
    params: Sequence[ArgKind] = ("value",)

    def __call__(self, text: str, *args: Any) -> bool:
        from charter.reflect.degenerate import echo_spans, texts_of

        return bool(echo_spans(text, texts_of(args[0] if args else None)))


class Repetitive:
    name: str = "repetitive"
    params: Sequence[ArgKind] = ()

    def __call__(self, text: str, *args: Any) -> bool:
        from charter.reflect.degenerate import repetitions

        return bool(repetitions(text))


class OffLanguage:
    name: str = "off_language"
    params: Sequence[ArgKind] = ("string",)

    def __call__(self, text: str, *args: Any) -> bool:
        from charter.reflect.degenerate import off_language

        return off_language(text, str(args[0]))


class NoContent:
    name: str = "no_content"
    params: Sequence[ArgKind] = ()

    def __call__(self, text: str, *args: Any) -> bool:
        from charter.reflect.degenerate import no_content

        return no_content(text)


PREDICATES: tuple[Predicate, ...] = (Echoes(), Repetitive(), OffLanguage(), NoContent())
