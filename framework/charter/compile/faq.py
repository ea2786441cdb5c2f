"""Compile stage ``faq``: a loaded ``faq.yaml`` becomes a ``FaqIndex``
(``charter.compile.specs.faq``, which the runtime searches).

Beyond the schema (whose problems are reported by the loader; entries it rejects are left out
here): an id defined twice (CH330, the second is dropped), and a question or alternate with no
searchable word left once punctuation and stop words are gone (CH331, a warning: no query can
match it).
"""

from __future__ import annotations

from charter.compile.specs.faq import DEFAULT_DIRECT_SCORE, DEFAULT_MIN_SCORE, FaqEntry, FaqIndex
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, error, warning
from charter.pack.typed.skills import FaqFile
from charter.pack.yamlsrc import LocatedDoc
from charter.text.tokens import tokenize


def compile_faq(doc: LocatedDoc, registry: Registry) -> tuple[FaqIndex, list[Diagnostic]]:
    """The FAQ index and the problems of ``doc``. ``registry`` is unused; every stage takes
    it."""
    data = FaqFile.read(doc.data)
    diags: list[Diagnostic] = []
    low = data.min_score
    min_score = float(low) if low is not None and 0 <= low <= 1 else DEFAULT_MIN_SCORE
    high = data.direct_score
    direct = float(high) if high is not None and 0 <= high <= 1 else DEFAULT_DIRECT_SCORE
    seen: dict[str, int] = {}
    entries: list[FaqEntry] = []
    for i, item in enumerate(data.entries):
        if item is None or item.id is None or item.question is None or item.answer is None:
            continue  # the schema reported it
        fid = item.id
        if fid in seen:
            diags.append(
                error(
                    "CH330",
                    f"FAQ id '{fid}' is defined twice",
                    doc.loc(("entries", i, "id")),
                    f"the first is item {seen[fid] + 1} of 'entries'; rename one",
                )
            )
            continue
        seen[fid] = i
        for ptr, text, what in (
            (("entries", i, "question"), item.question, "the question"),
            *(
                (("entries", i, "alternates", j), alt, f"alternate {j + 1}")
                for j, alt in enumerate(item.alternates)
            ),
        ):
            if not tokenize(text):
                diags.append(
                    warning(
                        "CH331",
                        f"{what} of FAQ '{fid}' has no searchable words: no query can match it",
                        doc.loc(ptr),
                        "punctuation and words such as 怎么, 哪些, 吗 are not searched; "
                        "say what it is about (退货, 补贴政策, SKU-A100)",
                    )
                )
        entries.append(
            FaqEntry(
                id=fid,
                question=item.question,
                answer=item.answer,
                alternates=item.alternates,
                skills=frozenset(item.skills),
                location=doc.loc(("entries", i)),
            )
        )
    return FaqIndex.build(entries, min_score, direct), diags
