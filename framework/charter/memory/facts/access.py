"""The fact channel's rules, as pure functions: who may read, write or administer a memory,
what a new value does to the one already held for its key, and the audit rows that record it.

Reads (``get``, ``by_entity``, ``by_intent``, ``search_text``) check three things beyond the
user scope, which the SQL itself enforces:

* domain scope: the accessor's ``use`` must be allowed to read the memory's domain
  (``MemoryPolicy.may_use``: a billing memory never feeds marketing);
* role: ``MemoryPolicy.may_see`` on the memory's key and type (allergy history only for
  ``doctor``);
* consent: a memory stored under a consent version (``consent_source``, e.g. ``app_v3.2``) is
  readable only by an accessor holding that same version. Seed 003 §2.2: what the user
  authorised in app 3.2 must be confirmed again after an upgrade; until then it is not used.

Writes check the user scope, the domain scope of the fact (a marketing conversation cannot write
or overwrite a billing memory) and consent (a fact that names a consent version the accessor
does not hold is refused: it would be unreadable the moment it is stored). Role visibility is
not checked on writes: recording a fact discloses nothing, and an agent must be able to store
an allergy that only a doctor may read.

Export, forget, listing and reading the audit trail are privileged: the data subject acting on
their own memories (role ``user``) or an operator (role ``admin``); an agent can do neither.

Every decision, allowed or denied, becomes an audit row; a denied one has action ``deny`` and a
reason that starts with what was refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from charter.compile.specs.memory import MemoryPolicy
from charter.memory.facts.tables import Action
from charter.memory.records import Accessor, PreparedFact, Source

PRIVILEGED_ROLES = frozenset({"user", "admin"})
# the order in which a source is trusted; the first two are facts the user or a system of
# record stated, the last two were guessed
SOURCE_RANK: Mapping[str, int] = {
    "user_confirmed": 0,
    "system_verified": 1,
    "inferred": 2,
    "default": 3,
}
CONFIRMED = frozenset({"user_confirmed", "system_verified"})

Resolution = Literal["insert", "refresh", "supersede", "contradict"]


def require_user(accessor: Accessor) -> None:
    """An accessor without a user would be a scope shared by everyone who has none."""
    if not accessor.user_id.strip():
        raise ValueError("an accessor must name a user: memory has no scope without one")


def read_refusal(policy: MemoryPolicy, accessor: Accessor, row: Mapping[Any, Any]) -> str | None:
    """Why ``accessor`` may not read this (already user-scoped) row; None when it may."""
    if not policy.may_use(row["domain"], accessor.use):
        return f"domain {row['domain']} is not readable for use {accessor.use}"
    if not policy.may_see(accessor.role, row["memory_type"], row["key"]):
        return f"role {accessor.role} may not see {row['key']} ({row['memory_type']})"
    held = row["consent_source"]
    if held is not None and held != accessor.consent:
        return f"stored under consent {held}, accessor holds {accessor.consent or 'none'}"
    return None


def write_refusal(policy: MemoryPolicy, accessor: Accessor, fact: PreparedFact) -> str | None:
    """Why ``accessor`` may not store ``fact``; None when it may."""
    if fact.user_id != accessor.user_id:
        # the other user's id stays out of this user's audit trail
        return "the fact belongs to another user"
    refused = change_refusal(policy, accessor, fact.domain)
    if refused is not None:
        return refused
    if fact.consent_source is not None and accessor.consent not in (None, fact.consent_source):
        return f"fact names consent {fact.consent_source}, accessor holds {accessor.consent}"
    return None


def change_refusal(policy: MemoryPolicy, accessor: Accessor, domain: str) -> str | None:
    """Why ``accessor`` may not change (write, deprecate) a memory of ``domain``."""
    if not policy.may_use(domain, accessor.use):
        return f"domain {domain} is not writable for use {accessor.use}"
    return None


def privileged_refusal(accessor: Accessor) -> str | None:
    if accessor.role not in PRIVILEGED_ROLES:
        allowed = " or ".join(sorted(PRIVILEGED_ROLES))
        return f"role {accessor.role} is not {allowed}"
    return None


def resolve(held: Mapping[Any, Any] | None, new: PreparedFact) -> Resolution:
    """What writing ``new`` does, given the active fact ``held`` for the same (user, key):

    * nothing held: ``insert``;
    * the same value (and the same encryption): ``refresh``, no new row: the held row keeps
      its id and history, its validity and confidence grow, its source becomes the more
      trusted of the two (an encrypted value is new ciphertext every time, so it supersedes);
    * a different value from a weaker source (inferred, default) than the held confirmed one
      (user_confirmed, system_verified): ``contradict``: the new row is stored with status
      ``contradicted`` and ``contradicts`` naming the held one, which stays active. Neither is
      lost: a guess never overwrites what the user or a system of record said, and the
      disagreement is there to show or to ask about;
    * otherwise ``supersede``: the held row becomes ``superseded`` (``valid_until`` now), the
      new one is active with ``supersedes`` naming it, in one transaction.
    """
    if held is None:
        return "insert"
    if held["value"] == new.value and bool(held["encrypted"]) == new.encrypted:
        return "refresh"
    if held["source"] in CONFIRMED and new.source not in CONFIRMED:
        return "contradict"
    return "supersede"


def stronger(a: str, b: Source) -> str:
    return a if SOURCE_RANK.get(a, 99) <= SOURCE_RANK[b] else b


def later(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later of two ``valid_until``; None is for ever."""
    return None if a is None or b is None else max(a, b)


def audit_row(
    accessor: Accessor,
    action: Action,
    at: datetime,
    memory_id: str | None = None,
    reason: str = "",
    *,
    allowed: bool = True,
) -> dict[str, Any]:
    return {
        "at": at,
        "actor": accessor.actor,
        "role": accessor.role,
        "user_id": accessor.user_id,
        "action": action,
        "memory_id": memory_id,
        "allowed": allowed,
        "reason": reason,
    }


def denied(
    accessor: Accessor, at: datetime, what: str, why: str, memory_id: str | None = None
) -> dict[str, Any]:
    return audit_row(accessor, "deny", at, memory_id, f"{what}: {why}", allowed=False)


SYSTEM = Accessor(user_id="", actor="system", role="system")


def system_row(
    user_id: str, action: Action, at: datetime, memory_id: str, reason: str
) -> dict[str, Any]:
    """An audit row for what the lifecycle did to a user's memory (expire, archive)."""
    row = audit_row(SYSTEM, action, at, memory_id, reason)
    row["user_id"] = user_id
    return row
