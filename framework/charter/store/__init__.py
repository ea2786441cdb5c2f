"""Storage plumbing every store shares: versioned migrations, prepared statements, the clock
and the id maker, and what a store does with personal data before a row is written.

The stores themselves live with what they keep (``goals.store``, ``memory.facts``,
``skills.tickets``, ``traces.store``); they build on this package and never on each other.
"""
