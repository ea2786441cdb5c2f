"""An application factory for uvicorn itself, when ``charter serve``'s one process is not
enough: ``uvicorn --factory charter.serve.factory:from_environment --workers 4``.

Each worker loads the configuration of its working directory and environment, as
``charter serve`` does, and builds its own agent when it starts; they share state through the
configured database (PostgreSQL for several workers or hosts).
"""

from __future__ import annotations

import logging.config

from fastapi import FastAPI

from charter.config import load_config
from charter.serve.app import create_app
from charter.serve.auth import tenant_problems
from charter.serve.logs import logging_config


def from_environment() -> FastAPI:
    """The application for this directory's configuration; RuntimeError with every problem
    when it cannot serve (uvicorn then stops with that message). Logging becomes JSON lines,
    as under ``charter serve``: uvicorn configured its own before it called the factory."""
    config, diags = load_config()
    errors = [d for d in (*diags, *config.check_serve(), *tenant_problems(config)) if d.is_error]
    if errors:
        raise RuntimeError(
            "the configuration cannot serve:\n" + "\n".join(d.headline() for d in errors)
        )
    logging.config.dictConfig(logging_config())
    return create_app(config)
