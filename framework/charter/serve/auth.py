"""Bearer tokens per tenant, and the user ids every store sees: ``<tenant>:<user_id>``.

A request's token names its tenant; every user id it mentions is prefixed with that tenant
before any store is asked, so no query a request can make reaches another tenant's users.
The tenant name cannot contain the separator (checked at start-up), so two different
(tenant, user) pairs never make the same stored id.

Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, against every tenant
without stopping at a match: neither the length nor the content of a guess changes how long a
refusal takes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass

from charter.config import Config
from charter.diagnostics import Diagnostic, Location, error
from charter.serve.errors import ApiError

SEPARATOR = ":"
_REALM = 'Bearer realm="charter"'


def scoped(tenant: str, user_id: str) -> str:
    return f"{tenant}{SEPARATOR}{user_id}"


def unscoped(tenant: str, stored: str) -> str:
    prefix = scoped(tenant, "")
    return stored[len(prefix) :] if stored.startswith(prefix) else stored


def tenant_problems(config: Config) -> list[Diagnostic]:
    """What ``check_serve`` does not check but scoping needs: tenant names without the
    separator (CH403). A token shared by two tenants is refused by ``Tenants.from_config``."""
    diags = []
    where = Location(config.file or "charter.toml")
    for i, tenant in enumerate(config.serve.tenants):
        if SEPARATOR in tenant.name:
            loc = config.origins.get(f"serve.tenants[{i}].name", where)
            diags.append(
                error(
                    "CH403",
                    f"serve.tenants[{i}].name must not contain '{SEPARATOR}'",
                    loc if isinstance(loc, Location) else where,
                    f"'{SEPARATOR}' separates the tenant from the user id in every store",
                )
            )
    return diags


@dataclass(frozen=True)
class Tenants:
    """The tenants of a server, by the digest of their token."""

    digests: tuple[tuple[str, bytes], ...]  # (tenant name, sha256 of its token)

    @classmethod
    def from_config(cls, config: Config, environ: Mapping[str, str]) -> Tenants:
        """Raises ValueError for a tenant without a token or a token shared by two tenants
        (``Config.check_serve`` reports the first with its location)."""
        digests: list[tuple[str, bytes]] = []
        owner: dict[bytes, str] = {}
        for tenant in config.serve.tenants:
            token = (
                tenant.token.reveal()
                if tenant.token is not None
                else environ.get(tenant.token_env, "").strip()
            )
            if not token:
                raise ValueError(f"tenant '{tenant.name}' has no bearer token")
            digest = _digest(token)
            if digest in owner:
                raise ValueError(
                    f"tenants '{owner[digest]}' and '{tenant.name}' have the same bearer token"
                )
            owner[digest] = tenant.name
            digests.append((tenant.name, digest))
        if not digests:
            raise ValueError("charter serve needs at least one [[serve.tenants]]")
        return cls(tuple(digests))

    def authenticate(self, authorization: str | None) -> str:
        """The tenant whose token the ``Authorization`` header carries; 401 otherwise."""
        if not authorization:
            raise ApiError(
                401,
                "unauthorized",
                "missing bearer token: send Authorization: Bearer <token>",
                {"WWW-Authenticate": _REALM},
            )
        m = re.fullmatch(r"[Bb]earer +(\S+) *", authorization)
        if m is None:
            raise ApiError(
                401,
                "unauthorized",
                "the Authorization header must be Bearer <token>",
                {"WWW-Authenticate": f'{_REALM}, error="invalid_request"'},
            )
        digest = _digest(m[1])
        found = None
        for name, expected in self.digests:
            if hmac.compare_digest(digest, expected):
                found = name
        if found is None:
            raise ApiError(
                401,
                "unauthorized",
                "invalid bearer token",
                {"WWW-Authenticate": f'{_REALM}, error="invalid_token"'},
            )
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
