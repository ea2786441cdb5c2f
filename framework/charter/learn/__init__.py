"""Learning from reflection (seed 001 §3, ARCHITECTURE §9): failure-triggered reflections are
logged as hypothesis / evidence / correction, ``charter learn`` compiles the log into patches
next to the pack, and the turn loop applies the patches before planning, without the model."""
