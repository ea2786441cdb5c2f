"""The plugin host: the hook specifications, how plugins are found (built-ins first, then the
entry-point group ``charter``) and registered by kind, and the one factory for a registry.

``charter.plugins.hookspecs`` is what a plugin author reads; ``charter.plugins.host`` builds a
``PluginHost`` (``make_host``, ``default_host``, ``default_registry``).
"""
