"""The version, in a module of its own so that any layer can import it."""

__version__ = "0.1.0"
