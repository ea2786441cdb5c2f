"""Skills (ARCHITECTURE §8): contracts, their execution through a breaker, fallback protocols
and the tickets a handoff to a human leaves."""
