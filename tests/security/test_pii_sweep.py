"""Issue 16, acceptance 2: no raw personal data anywhere.

The generated corpus (``pii_corpus``: 432 statements, IDs, mobiles, cards and addresses in every
spelling seen leaking) is sent as turns, through the HTTP service, to each shipped pack; then
every row of every table of the database (goals, history, context, facts, short-term memory,
traces, tickets, the reflection log …), every file of the narrative (LanceDB) directory, every
trace as the API returns it and every log record are searched for each raw value, also with its
separators removed. The count must be 0.
"""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from tests.security.conftest import MakeService, Service, auth
from tests.security.pii_corpus import Statement, corpus, leaked
from tests.security.scan import database_text, directory_text, lance_text

CORPUS = corpus()


def sweep(service: Service, user: str, records: list[logging.LogRecord]) -> dict[str, int]:
    """Where each raw value was found: place -> number of statements leaked there."""
    found: dict[str, set[Statement]] = {}

    def scan(place: str, text: str) -> None:
        for s in leaked(text, CORPUS):
            found.setdefault(place, set()).add(s)

    for table, text in database_text(service.database_url):
        scan(f"table {table}", text)
    for name, text in directory_text(service.narrative):
        scan(f"narrative {name}", text)
    for name, text in lance_text(service.narrative):
        scan(f"narrative table {name}", text)
    listed = service.client.get("/v1/traces", params={"user_id": user}, headers=auth("acme"))
    assert listed.status_code == 200, listed.text
    scan("traces API", listed.text)
    for record in records:
        scan(f"log {record.name}", record.getMessage())
    return {place: len(s) for place, s in sorted(found.items())}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("pack", ["ecommerce", "finance", "medical"])
def test_no_raw_personal_data_anywhere(
    service: MakeService,
    pack: str,
    backend: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    svc = service(backend, pack)
    user = "u-sweep"
    for i, s in enumerate(CORPUS):
        r = svc.turn("acme", user, s.text, session_id=f"s{i // 8}")
        assert r.status_code == 200, (s.text, r.text)
    assert len(CORPUS) >= 400
    assert sweep(svc, user, caplog.records) == {}


def test_the_sweep_finds_what_is_planted(service: MakeService) -> None:
    """The sweep can fail: a raw card number written past the agent is found, in every form."""
    svc = service("sqlite", "ecommerce")
    assert svc.turn("acme", "u1", "你好", session_id="s1").status_code == 200
    card = next(s for s in CORPUS if s.kind == "bank_card" and s.spelling == "plain")
    spaced = next(
        s for s in CORPUS if s.kind == "phone" and s.spelling == "full-width dashed-3-4-4"
    )
    planted = f"卡号{card.value}，{spaced.value}"
    engine = sa.create_engine(svc.database_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE trace SET reply = :r"), {"r": planted})
    engine.dispose()
    (svc.narrative / "planted.txt").parent.mkdir(parents=True, exist_ok=True)
    (svc.narrative / "planted.txt").write_text(card.digits, encoding="utf-8")
    found = sweep(svc, "u1", [])
    # every statement of the card and of the mobile, whatever its spelling: ten spellings each
    assert found["table trace"] == len(leaked(planted, CORPUS)) == 20
    assert found["narrative planted.txt"] == 10
