"""What plugins and the runtime agree on: the Protocols an extension implements, the frozen
events lifecycle hooks receive, the registry of named extensions, and the pluggy markers.

This package imports nothing of Charter but ``diagnostics``, so every layer may use it.
"""
