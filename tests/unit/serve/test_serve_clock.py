"""Issue 32 item 6: serve's clock reaches the skills. ``charter serve --now ISO`` fixes the
agent's clock as ``charter chat --now`` does (a time without its UTC offset is refused, with
chat's words); a skill called through the HTTP API gets a ``SkillContext`` whose ``now`` is the
server's clock — the fixed one, else the wall clock, ``clock_set`` saying which — and whose
pack, user (scoped by the tenant) and session are the request's."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import charter.cli.serve as serve_cli
from charter.contracts.registry import Registry
from charter.contracts.skills import Skill, SkillContext
from tests.support.cli import Run, RunCharter
from tests.support.serve import KEY, ROOT, TOKENS, TestClient, auth

CST = timezone(timedelta(hours=8))


class Echo:
    """The order lookup, keeping the context each call was given."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.seen: list[SkillContext] = []

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext) -> Any:
        self.seen.append(context)
        return self.skill(args)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("CHARTER_") and name != "CHARTER_CACHE_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("TOKEN_ACME", TOKENS["acme"])
    monkeypatch.setenv("CHARTER_MEMORY_KEY", KEY)
    (tmp_path / "charter.toml").write_text(
        f"""\
[database]
url = "sqlite:///{tmp_path / "charter.db"}"
[memory]
narrative_path = "{tmp_path / "narrative"}"
[model]
backend = "scripted"
[model.options]
default = "好的"
[agent]
domain = "{ROOT / "domains" / "ecommerce"}"
[[serve.tenants]]
name = "acme"
token_env = "TOKEN_ACME"
""",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def served(
    here: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch, now: str | None
) -> list[SkillContext]:
    """One turn through ``charter serve [--now]``'s application (uvicorn.run replaced by a
    test client over the application it was given); the contexts the order lookup saw."""
    import uvicorn

    echo = Echo(registry.skills["order_lookup"])
    reg = replace(registry, skills={**registry.skills, "order_lookup": echo})
    monkeypatch.setattr(serve_cli, "runtime_registry", lambda: (reg, []))
    replies: list[Any] = []

    def run(app: Any, **_: Any) -> None:
        with TestClient(app) as client:
            body = {"user_id": "u1", "session_id": "s1", "text": "帮我查一下订单DD202405010001"}
            replies.append(client.post("/v1/turns", json=body, headers=auth("acme")))

    monkeypatch.setattr(uvicorn, "run", run)
    assert serve_cli.run(now=now) == 0
    (reply,) = replies
    assert reply.status_code == 200
    assert reply.json()["text"].startswith("订单DD202405010001当前状态为已发货")
    return echo.seen


def test_the_servers_fixed_clock_and_the_requests_identity_reach_the_skill(
    here: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = served(here, registry, monkeypatch, "2027-03-02T09:00:00+08:00")
    fixed = datetime(2027, 3, 2, 9, 0, tzinfo=CST)
    assert seen == [SkillContext(fixed, True, "ecommerce", "acme:u1", "s1")]


def test_on_the_wall_clock_the_skill_is_told_the_clock_was_not_set(
    here: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = datetime.now(CST)
    (told,) = served(here, registry, monkeypatch, None)
    assert (told.clock_set, told.pack, told.user_id, told.session_id) == (
        False,
        "ecommerce",
        "acme:u1",
        "s1",
    )
    assert before <= told.now <= datetime.now(CST) and told.now.utcoffset() is not None


@pytest.mark.parametrize("now", ["2027-03-02T09:00", "明天上午", "2027-03-02"])
def test_serve_refuses_a_now_without_its_offset(here: Path, charter: RunCharter, now: str) -> None:
    assert charter("serve", "--now", now) == Run(
        1,
        "",
        f"charter serve: --now {now!r} is not an ISO 8601 time with a UTC offset "
        "(2025-06-30T10:00+08:00)\n",
    )
