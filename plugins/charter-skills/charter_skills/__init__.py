"""Reference skill implementations for the finance, ecommerce and medical packs.

They answer from small JSON files shipped in ``charter_skills/data`` (fictional demo data, no
network), so the packs' contracts, fallbacks and ``tests:`` run anywhere. A real deployment
replaces them with a plugin that registers skills of the same names over its own systems.
"""
