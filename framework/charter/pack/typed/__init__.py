"""The typed pack model (ARCHITECTURE §1): one pydantic model per pack file kind, read after the
file's JSON Schema check (``charter.pack.schema``) so that the schema's diagnostics keep their
locations, and read leniently (``_lenient``) so that the compile stages still run on a file the
schema rejected and report every other problem of it in the same run.
"""
