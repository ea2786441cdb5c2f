"""Compile packs: load (pack) -> parse (dsl) -> check -> analyze -> build, with a disk cache.

The entry point is ``charter.compile.api.compile_path``. This package's ``__init__`` imports
nothing, so the runtime can import the compiled data structures (``compiled``, ``build``,
``env``) without pulling in the parser.
"""
