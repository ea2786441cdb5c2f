"""The HTTP service (``charter serve``): ``create_app(config)`` is a FastAPI application.

Needs the ``serve`` extra (FastAPI, uvicorn): ``pip install 'charter[serve]'``.
"""

from charter.serve.app import create_app

__all__ = ["create_app"]
