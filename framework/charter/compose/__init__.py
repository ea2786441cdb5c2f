"""Reply composition (ARCHITECTURE §5a): a turn's goal events told by the pack's templates."""
