"""Goal tracking (ARCHITECTURE §6): goals.yaml, the planner, the goal store and its sweeper."""
