"""docs/openapi.json is the document the application serves."""

from __future__ import annotations

import json

from charter.serve.openapi import document
from tests.support.serve import ROOT, TestClient

CHECKED_IN = ROOT / "docs" / "openapi.json"


def test_the_checked_in_document_is_current() -> None:
    checked_in = json.loads(CHECKED_IN.read_text(encoding="utf-8"))
    assert checked_in == document(), (
        "docs/openapi.json is out of date: regenerate it with "
        "`python -m charter.serve.openapi docs/openapi.json`"
    )


def test_every_endpoint_is_documented_with_its_errors() -> None:
    doc = document()
    operations = {
        (method.upper(), path): op
        for path, item in doc["paths"].items()
        for method, op in item.items()
    }
    assert sorted(operations) == [
        ("DELETE", "/v1/users/{user_id}"),
        ("GET", "/healthz"),
        ("GET", "/v1/health"),
        ("GET", "/v1/traces"),
        ("GET", "/v1/traces/{trace_id}"),
        ("GET", "/v1/users/{user_id}/goals"),
        ("GET", "/v1/users/{user_id}/memory"),
        ("GET", "/v1/users/{user_id}/memory/export"),
        ("HEAD", "/healthz"),
        ("POST", "/v1/turns"),
    ]
    for key, op in operations.items():
        if key[1] == "/healthz":
            assert "security" not in op
            continue
        assert op["security"] == [{"HTTPBearer": []}], key
        assert op["responses"]["401"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorBody"
        }, key
    turn = operations[("POST", "/v1/turns")]
    schema = turn["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["user_id", "session_id", "text"]
    assert schema["properties"]["text"]["maxLength"] == 4000
    assert sorted(turn["responses"]) == ["200", "400", "401", "408", "413", "422", "502", "503"]
    for key, op in operations.items():  # a database fault is a 503 wherever a store is read
        if key[1] != "/healthz":
            assert "503" in op["responses"], key


def test_the_application_serves_it(client: TestClient) -> None:
    r = client.get("/openapi.json")
    assert r.status_code == 200
    assert r.json() == json.loads(CHECKED_IN.read_text(encoding="utf-8"))
