"""``charter health``: the Cognitive Health Index of seed 001 §5 — memory, reflection and skill
health counted from the stores and traces (``metrics``), printed as a table or JSON
(``report``) or drawn as a self-contained HTML page (``html``)."""
