"""Access control and audit of the fact store: user scope, domain scope, role, consent and the
privileged operations, each allowed or denied with its audit row; every statement the store
runs names the accessor's user; on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Protocol

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from charter.compile.specs.memory import DEFAULT_TYPES, MemoryPolicy, MemoryType, Validity
from charter.memory.facts import FactStore
from charter.memory.records import Accessor, PreparedFact

MakeFact = Callable[..., PreparedFact]
ADMIN = Accessor("u1", "ops", role="admin")


class Clock(Protocol):
    now: datetime

    def __call__(self) -> datetime: ...
    def advance(self, **delta: float) -> datetime: ...


POLICY = MemoryPolicy(
    types={
        **DEFAULT_TYPES,
        "allergy": MemoryType("allergy", Validity("forever"), "L3", roles=("doctor",)),
    },
    scopes={"billing": frozenset({"billing", "support"})},
    # a restriction on a key wins over its type's: a nurse may see this one allergy note
    roles={"allergy_note": frozenset({"doctor", "nurse"})},
)


@pytest.fixture
def store(memory_db_url: str, clock: Clock, ids: Callable[[], str]) -> Iterator[FactStore]:
    with FactStore(memory_db_url, POLICY, clock=clock, ids=ids) as s:
        yield s


def trail(store: FactStore, user: str = "u1") -> list[tuple[Any, ...]]:
    """(action, allowed, actor, role, memory id, reason) of the user's audit rows."""
    return [
        (e.action, e.allowed, e.actor, e.role, e.memory_id, e.reason)
        for e in store.audit_trail(Accessor(user, "ops", role="admin"))
    ]


def fact_rows(store: FactStore) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM memory_fact")).scalar_one())


def test_a_fact_of_another_user_is_refused_and_audited(
    store: FactStore, make_fact: MakeFact
) -> None:
    with pytest.raises(PermissionError) as caught:
        store.write(Accessor("u1", "agent"), make_fact("phone", "[PHONE]", user_id="u2"))
    assert str(caught.value) == "write phone refused: the fact belongs to another user"
    assert fact_rows(store) == 0
    assert trail(store) == [
        ("deny", False, "agent", "agent", None, "write phone: the fact belongs to another user")
    ]
    assert trail(store, "u2") == []  # nothing about the refused write lands in u2's trail


def test_domain_scope(store: FactStore, make_fact: MakeFact) -> None:
    billing = Accessor("u1", "agent", use="billing")
    store.write(billing, make_fact("bill_day", "每月5日", domain="billing"))
    assert store.get(Accessor("u1", "agent", use="marketing"), "bill_day") is None
    assert store.get(Accessor("u1", "agent"), "bill_day") is None
    support = store.get(Accessor("u1", "agent", use="support"), "bill_day")
    assert support is not None and support.value == "每月5日"
    marketing = Accessor("u1", "mkt", use="marketing")
    with pytest.raises(PermissionError, match="domain billing is not writable for use marketing"):
        store.write(marketing, make_fact("bill_day", "每月9日", domain="billing"))
    with pytest.raises(PermissionError, match="domain billing is not writable for use marketing"):
        store.deprecate(marketing, "bill_day")
    assert store.get(billing, "bill_day") is not None
    assert trail(store) == [
        ("write", True, "agent", "agent", "f-001", "bill_day"),
        (
            "deny",
            False,
            "agent",
            "agent",
            "f-001",
            "get bill_day: domain billing is not readable for use marketing",
        ),
        (
            "deny",
            False,
            "agent",
            "agent",
            "f-001",
            "get bill_day: domain billing is not readable for use default",
        ),
        ("read", True, "agent", "agent", "f-001", "get bill_day"),
        (
            "deny",
            False,
            "mkt",
            "agent",
            None,
            "write bill_day: domain billing is not writable for use marketing",
        ),
        (
            "deny",
            False,
            "mkt",
            "agent",
            "f-001",
            "deprecate bill_day: domain billing is not writable for use marketing",
        ),
        ("read", True, "agent", "agent", "f-001", "get bill_day"),
    ]


@pytest.mark.parametrize(
    ("role", "sees"),
    [("doctor", ["allergy_note", "penicillin"]), ("nurse", ["allergy_note"]), ("agent", [])],
)
def test_role_visibility(store: FactStore, make_fact: MakeFact, role: str, sees: list[str]) -> None:
    writer = Accessor("u1", "agent")  # writing discloses nothing: an agent may record it
    for key in ("penicillin", "allergy_note"):
        store.write(writer, make_fact(key, "青霉素过敏", memory_type="allergy", level="L3"))
    reader = Accessor("u1", "clinic", role=role)
    assert [k for k in ("allergy_note", "penicillin") if store.get(reader, k)] == sees
    found = store.search_text(reader, ["青霉素"])
    assert sorted(f.key for f in found) == sees
    denied = [e for e in trail(store) if e[0] == "deny"]
    refused = {"doctor": 0, "nurse": 2, "agent": 4}[role]  # one per refused fact and read
    assert len(denied) == refused
    if role == "agent":
        assert denied[0][5] == "get allergy_note: role agent may not see allergy_note (allergy)"


def test_consent(store: FactStore, make_fact: MakeFact) -> None:
    v32 = Accessor("u1", "agent", consent="app_v3.2")
    store.write(v32, make_fact("device", "HG6145V"))
    assert store.get(Accessor("u1", "agent", consent="app_v3.3"), "device") is None
    assert store.get(Accessor("u1", "agent"), "device") is None
    got = store.get(v32, "device")
    assert got is not None and got.consent_source == "app_v3.2"
    with pytest.raises(
        PermissionError, match=r"fact names consent app_v3\.2, accessor holds app_v3\.3"
    ):
        store.write(
            Accessor("u1", "agent", consent="app_v3.3"),
            make_fact("device", "HG8245", consent_source="app_v3.2"),
        )
    assert [e[5] for e in trail(store) if e[0] == "deny"] == [
        "get device: stored under consent app_v3.2, accessor holds app_v3.3",
        "get device: stored under consent app_v3.2, accessor holds none",
        "write device: fact names consent app_v3.2, accessor holds app_v3.3",
    ]
    # the user consents again (3.3) and restates it: stored under the consent held now
    v33 = Accessor("u1", "agent", consent="app_v3.3")
    assert store.write(v33, make_fact("device", "HG8245")).consent_source == "app_v3.3"
    assert store.get(v32, "device") is None


def test_lists_leave_out_and_audit_each_refused_fact(store: FactStore, make_fact: MakeFact) -> None:
    store.write(Accessor("u1", "agent"), make_fact("a", "退款进度", intent_type="refund"))
    billing = Accessor("u1", "agent", use="billing")
    store.write(billing, make_fact("b", "退款金额", intent_type="refund", domain="billing"))
    store.write(Accessor("u1", "agent"), make_fact("c", "退款原因", intent_type="refund"))
    agent = Accessor("u1", "agent")
    assert [f.id for f in store.by_intent(agent, "refund")] == ["f-003", "f-001"]
    assert [f.id for f in store.search_text(agent, ["退款"])] == ["f-003", "f-001"]
    assert [(e[0], e[4], e[5]) for e in trail(store)[3:]] == [
        ("read", "f-003", "by_intent refund"),
        ("deny", "f-002", "by_intent refund: domain billing is not readable for use default"),
        ("read", "f-001", "by_intent refund"),
        ("read", "f-003", "search"),
        ("deny", "f-002", "search: domain billing is not readable for use default"),
        ("read", "f-001", "search"),
    ]
    assert store.by_intent(agent, "nothing") == []
    last = trail(store)[-1]
    assert (last[0], last[4], last[5]) == ("read", None, "by_intent nothing: nothing found")


@pytest.mark.parametrize("operation", ["list_facts", "export", "forget", "audit_trail"])
def test_privileged_operations_refuse_an_agent(
    store: FactStore, make_fact: MakeFact, operation: str
) -> None:
    store.write(Accessor("u1", "agent"), make_fact("a", "1"))
    agent = Accessor("u1", "agent")
    with pytest.raises(PermissionError) as caught:
        getattr(store, operation)(agent)
    what = {"list_facts": "list", "audit_trail": "audit"}.get(operation, operation)
    assert str(caught.value) == f"{what} refused: role agent is not admin or user"
    assert fact_rows(store) == 1
    assert trail(store)[-1] == (
        "deny",
        False,
        "agent",
        "agent",
        None,
        f"{what}: role agent is not admin or user",
    )
    # the user themself may
    getattr(store, operation)(Accessor("u1", "app", role="user"))


def test_an_accessor_without_a_user_is_refused_everywhere(
    store: FactStore, make_fact: MakeFact
) -> None:
    nobody = Accessor(" ", "agent", role="admin")
    calls: list[Callable[[], object]] = [
        lambda: store.write(nobody, make_fact("a", "1", user_id=" ")),
        lambda: store.get(nobody, "a"),
        lambda: store.by_entity(nobody, "x"),
        lambda: store.by_intent(nobody, "x"),
        lambda: store.search_text(nobody, ["x"]),
        lambda: store.search_text(nobody, []),
        lambda: store.deprecate(nobody, "a"),
        lambda: store.list_facts(nobody),
        lambda: store.export(nobody),
        lambda: store.forget(nobody),
        lambda: store.audit_trail(nobody),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="an accessor must name a user"):
            call()
    assert fact_rows(store) == 0


def test_every_statement_names_the_accessors_user(
    memory_sqlite_url: str, clock: Clock, ids: Callable[[], str], make_fact: MakeFact
) -> None:
    """SQLite reports each statement with its values bound: every one that reads or changes
    memory is restricted to ``user_id = 'u1'`` (u2's words in a search are only search words),
    every row inserted carries u1 (the forget's own audit row carries its hash instead)."""
    with FactStore(memory_sqlite_url, clock=clock, ids=ids) as store:
        for user in ("u1", "u2"):
            for key in ("phone", "city"):
                store.write(
                    Accessor(user, "agent"),
                    make_fact(key, f"{user}-{key}", user_id=user, entity_ref="E1", intent_type="i"),
                )
        store.engine.dispose()
        seen: list[str] = []
        event.listen(
            store.engine, "connect", lambda dbapi, _rec: dbapi.set_trace_callback(seen.append)
        )
        u1, admin = Accessor("u1", "agent"), Accessor("u1", "ops", role="admin")
        store.write(u1, make_fact("phone", "u1-new"))
        store.write(u1, make_fact("email", "[EMAIL]"))
        store.get(u1, "city")
        store.by_entity(u1, "E1")
        store.by_intent(u1, "i")
        store.search_text(u1, ["u2-phone", "u2", "%"])
        store.deprecate(u1, "email")
        store.list_facts(admin, history=True)
        store.export(admin)
        store.audit_trail(admin)
        store.forget(admin)
    touching = [s for s in seen if "memory_fact" in s or "memory_audit" in s]
    assert len(touching) > 20
    for statement in touching:
        if statement.startswith("INSERT"):
            assert "'u2'" not in statement, statement
            forget_row = "'forget'" in statement
            assert ("'forgotten'" in statement) == forget_row, statement
            assert ("'u1'" in statement) != forget_row, statement
        else:
            assert re.findall(r"user_id = '([^']*)'", statement) == ["u1"], statement


def test_users_never_see_each_others_facts(store: FactStore, make_fact: MakeFact) -> None:
    for user in ("u1", "u10", "u%", "U1"):
        store.write(
            Accessor(user, "agent"),
            make_fact("phone", f"{user}的电话", user_id=user, entity_ref="ORD-1", intent_type="i"),
        )
    for user in ("u1", "u10", "u%", "U1"):
        me = Accessor(user, "agent")
        found = [
            store.get(me, "phone"),
            *store.by_entity(me, "ORD-1"),
            *store.by_intent(me, "i"),
            *store.search_text(me, ["电话", "u1", "u%"]),
        ]
        assert {f.user_id for f in found if f} == {user}
        assert {f.value for f in found if f} == {f"{user}的电话"}
    assert store.get(Accessor("u", "agent"), "phone") is None
