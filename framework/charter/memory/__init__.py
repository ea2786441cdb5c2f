"""Layered memory (ARCHITECTURE §7): the pack's memory policy, working and short-term memory,
the fact channel, the write pipeline."""
