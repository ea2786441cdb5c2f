"""The OpenAPI document of the HTTP API, as checked into ``docs/openapi.json``.

Regenerate it after changing an endpoint or a model::

    python -m charter.serve.openapi docs/openapi.json

(``tests/unit/serve/test_openapi.py`` fails while the checked-in document differs.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from charter.agent import Agent
from charter.config import Config, Secret, ServeConfig, TenantConfig
from charter.serve.app import create_app

# a configuration that can serve, for the document only: no agent is ever built from it
_DOCUMENTED = Config(
    serve=ServeConfig(tenants=(TenantConfig("example", token=Secret("-", "documentation")),))
)


def _no_agent() -> Agent:  # pragma: no cover - the document needs no running application
    raise RuntimeError("the OpenAPI document needs no agent")


def document() -> dict[str, Any]:
    app = create_app(_DOCUMENTED, agent_factory=_no_agent, environ={})
    return app.openapi()


def render() -> str:
    return json.dumps(document(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        sys.stderr.write("usage: python -m charter.serve.openapi [FILE]\n")
        return 2
    if argv:
        Path(argv[0]).write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
