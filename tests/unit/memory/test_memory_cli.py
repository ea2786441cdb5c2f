"""``charter memory list|show|forget|export|audit``: exact output, exit codes, where the database
and the policy come from.

The CLI runs in-process (``charter.cli.main.main``). The facts are written beforehand through
``FactStore``, and the CLI's own store is given the same fake clock and id counter (the store
class is patched where the CLI imports it), so every id and time printed is known."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

import pytest
import sqlalchemy as sa

import charter.memory.facts as facts_module
from charter.memory.facts import FactStore
from charter.memory.records import Accessor, PreparedFact
from tests.support.cli import Run, RunCharter

ROOT = Path(__file__).resolve().parents[3]
MakeFact = Callable[..., PreparedFact]
CIPHERTEXT = "AAECAwQFBgcICQoLDA0ODw=="


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


def write_memories(url: str, clock: Clock, ids: Callable[[], str], make_fact: MakeFact) -> None:
    with FactStore(url, clock=clock, ids=ids) as store:
        agent = Accessor("u1", "agent")
        store.write(agent, make_fact("size", "M", memory_type="preference"))
        store.write(agent, make_fact("size", "L", memory_type="preference", source="inferred"))
        store.write(
            Accessor("u1", "agent", use="billing"),
            make_fact(
                "phone",
                CIPHERTEXT,
                encrypted=True,
                level="L2",
                memory_type="account_fact",
                domain="billing",
            ),
        )
        store.write(agent, make_fact("city", "上海"))
        clock.advance(hours=1)
        store.write(agent, make_fact("city", "杭州", entity_ref="ORD-1", confidence=0.9))
        store.write(Accessor("u2", "agent"), make_fact("size", "S", user_id="u2"))
        clock.advance(hours=1)


@pytest.fixture
def db(
    memory_db_url: str,
    clock: Clock,
    ids: Callable[[], str],
    make_fact: MakeFact,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> str:
    monkeypatch.delenv("CHARTER_MEMORY_URL", raising=False)
    monkeypatch.delenv("CHARTER_DATABASE_URL", raising=False)
    monkeypatch.setenv("CHARTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    write_memories(memory_db_url, clock, ids, make_fact)
    patched = functools.partial(FactStore, clock=clock, ids=ids)
    monkeypatch.setattr(facts_module, "FactStore", patched)
    return memory_db_url


LIST = """\
user u1: 3 active facts
  f-005  active       city = 杭州  (fact, default, L0, user_confirmed 0.90, until forever)
  f-003  active       phone = <encrypted>  (account_fact, billing, L2, user_confirmed 1.00, until forever)
  f-001  active       size = M  (preference, default, L0, user_confirmed 1.00, until forever)
"""

LIST_ALL = """\
user u1: 5 facts
  f-001  active       size = M  (preference, default, L0, user_confirmed 1.00, until forever)
  f-002  contradicted size = L  (preference, default, L0, inferred 1.00, until forever)
  f-003  active       phone = <encrypted>  (account_fact, billing, L2, user_confirmed 1.00, until forever)
  f-004  superseded   city = 上海  (fact, default, L0, user_confirmed 1.00, until 2024-05-01T11:00:00Z)
  f-005  active       city = 杭州  (fact, default, L0, user_confirmed 0.90, until forever)
"""


def test_list(charter: RunCharter, db: str) -> None:
    assert charter("memory", "list", "--user", "u1", "--db", db) == Run(0, LIST, "")
    assert charter("memory", "list", "--user", "u1", "--all", "--db", db) == Run(0, LIST_ALL, "")
    assert charter("memory", "list", "--user", "nobody", "--db", db) == Run(
        0, "no active facts for user nobody\n", ""
    )


SHOW_CITY = """\
fact f-005 of user u1: city
  value        杭州
  status       active
  type         fact (L0)
  domain       default
  source       user_confirmed, confidence 0.90
  created      2024-05-01T11:00:00Z
  valid until  forever
  entity       ORD-1
  intent       -
  consent      -
  value score  0
  supersedes   f-004
  contradicts  -
  used         1 time(s), last 2024-05-01T12:00:00Z
"""


def test_show(charter: RunCharter, db: str) -> None:
    assert charter("memory", "show", "--user", "u1", "city", "--db", db) == Run(0, SHOW_CITY, "")
    assert charter("memory", "show", "--user", "u2", "city", "--db", db) == Run(
        1,
        "",
        "charter memory show: no readable fact 'city' for user u2 (role agent, use default)\n",
    )
    refused = charter("memory", "show", "--user", "u1", "phone", "--db", db)
    assert refused == Run(
        1,
        "",
        "charter memory show: no readable fact 'phone' for user u1 (role agent, use default)\n",
    )
    shown = charter("memory", "show", "--user", "u1", "phone", "--use", "billing", "--db", db)
    assert shown.code == 0
    assert shown.out.splitlines()[:3] == [
        "fact f-003 of user u1: phone",
        f"  value        [encrypted] {CIPHERTEXT}",
        "  status       active",
    ]


def test_show_uses_the_packs_memory_policy(charter: RunCharter, db: str) -> None:
    """finance's memory.yaml lets support read billing memories; the default policy does not."""
    args = ("memory", "show", "--user", "u1", "phone", "--use", "support", "--db", db)
    assert charter(*args).code == 1
    finance = str(ROOT / "domains" / "finance")
    with_pack = charter(*args, "--domain", finance)
    assert (with_pack.code, with_pack.err) == (0, "")
    assert with_pack.out.startswith("fact f-003 of user u1: phone\n")
    unknown = charter(*args, "--domain", "no-such-pack")
    assert unknown.code == 1
    assert unknown.err.startswith("charter memory show: unknown domain 'no-such-pack'")


AUDIT_U2 = """\
2024-05-01T11:00:00Z  write      ok      agent/agent  f-006  size
2024-05-01T12:00:00Z  read       ok      cli/agent  -  get city: nothing found
"""


def test_audit(charter: RunCharter, db: str) -> None:
    charter("memory", "show", "--user", "u2", "city", "--db", db)
    assert charter("memory", "audit", "--user", "u2", "--db", db) == Run(0, AUDIT_U2, "")
    third = charter("memory", "audit", "--user", "u2", "--db", db).out.splitlines()[-1]
    assert third == "2024-05-01T12:00:00Z  audit      ok      cli/admin  -  2 rows"
    charter("memory", "show", "--user", "u1", "phone", "--db", db)
    denied = charter("memory", "audit", "--user", "u1", "--db", db).out.splitlines()[-1]
    assert denied == (
        "2024-05-01T12:00:00Z  deny       DENIED  cli/agent  f-003  "
        "get phone: domain billing is not readable for use default"
    )
    assert charter("memory", "audit", "--user", "nobody", "--db", db) == Run(
        0, "no audit rows for user nobody\n", ""
    )


def test_export(charter: RunCharter, db: str, tmp_path: Path) -> None:
    out = charter("memory", "export", "--user", "u1", "--db", db)
    assert out.code == 0
    data = json.loads(out.out)
    assert out.out == json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    assert [(f["id"], f["status"], f["value"]) for f in data["facts"]] == [
        ("f-001", "active", "M"),
        ("f-002", "contradicted", "L"),
        ("f-003", "active", CIPHERTEXT),
        ("f-004", "superseded", "上海"),
        ("f-005", "active", "杭州"),
    ]
    assert data["audit"][-1]["action"] == "export"
    assert data["audit"][-1]["actor"] == "cli"
    target = tmp_path / "u1.json"
    saved = charter("memory", "export", "--user", "u1", "--out", str(target), "--db", db)
    assert saved == Run(0, f"exported 5 facts and 8 audit rows of user u1 to {target}\n", "")
    assert json.loads(target.read_text(encoding="utf-8"))["facts"] == data["facts"]


def test_forget(charter: RunCharter, db: str) -> None:
    assert charter("memory", "forget", "--user", "u1", "--db", db) == Run(
        1, "", "charter memory forget: this deletes every memory of user u1: add --yes to confirm\n"
    )
    assert charter("memory", "list", "--user", "u1", "--db", db).out == LIST
    assert charter("memory", "forget", "--user", "u1", "--yes", "--db", db) == Run(
        0, "forgot user u1: 5 facts and their audit trail deleted\n", ""
    )
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        for table in ("memory_fact", "memory_audit"):
            query = sa.text(f"SELECT count(*) FROM {table} WHERE user_id = 'u1'")
            assert conn.execute(query).scalar_one() == 0
    engine.dispose()
    assert charter("memory", "list", "--user", "u1", "--db", db).out == (
        "no active facts for user u1\n"
    )
    assert charter("memory", "list", "--user", "u2", "--db", db).out.startswith("user u2: 1 ")


def test_forget_and_export_reach_the_narrative_channel(
    charter: RunCharter, db: str, tmp_path: Path
) -> None:
    from charter.compile.specs.memory import MemoryPolicy
    from charter.memory.embedders import HashEmbedder
    from charter.memory.narrative import NarrativeStore
    from charter.memory.records import Accessor, PreparedSummary

    lance = tmp_path / "narrative"
    store = NarrativeStore(lance, HashEmbedder(), MemoryPolicy())
    for user in ("u1", "u1", "u2"):
        store.add(
            Accessor(user, "agent"), [PreparedSummary(user, f"{user} 问过合同第三条", "default")]
        )
    out = tmp_path / "u1.json"
    assert charter(
        "memory", "export", "--user", "u1", "--db", db, "--narrative", str(lance), "--out", str(out)
    ) == Run(0, f"exported 5 facts, 2 summaries and 8 audit rows of user u1 to {out}\n", "")
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert [s["text"] for s in exported["summaries"]] == ["u1 问过合同第三条"] * 2
    assert [(a["action"], a["reason"]) for a in exported["audit"][-2:]] == [
        ("export", "narrative: 2"),
        ("export", "5 facts"),
    ]
    assert charter(
        "memory", "forget", "--user", "u1", "--yes", "--db", db, "--narrative", str(lance)
    ) == Run(0, "forgot user u1: 5 facts, 2 summaries and their audit trail deleted\n", "")
    blob = b"".join(p.read_bytes() for p in lance.rglob("*") if p.is_file())
    assert (b"u1" in blob, b"u2" in blob) == (False, True)
    assert charter(
        "memory",
        "forget",
        "--user",
        "u1",
        "--yes",
        "--db",
        db,
        "--narrative",
        str(tmp_path / "none"),
    ) == Run(
        1,
        "",
        f"charter memory forget: {tmp_path / 'none'} holds no narrative memory (no narrative.lance in it)\n",
    )


def test_where_the_database_comes_from(
    charter: RunCharter, db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.db"
    assert charter("memory", "list", "--user", "u1", "--db", f"sqlite:///{missing}") == Run(
        1,
        "",
        f"charter memory list: no database at {missing} "
        "(give --db URL or set CHARTER_MEMORY_URL)\n",
    )
    assert charter("memory", "list", "--user", "u1").err == (
        "charter memory list: no database at charter.db (give --db URL or set CHARTER_MEMORY_URL)\n"
    )
    monkeypatch.setenv("CHARTER_MEMORY_URL", db)
    assert charter("memory", "list", "--user", "u1") == Run(0, LIST, "")
    assert charter("memory", "list", "--user", "u1", "--db", "::nonsense").err == (
        "charter memory list: not a database URL: '::nonsense'\n"
    )
