"""The ``charter`` command line (``charter.cli.main``). Nothing outside this package imports it.

The exit codes live here, where ``main`` can read them without importing ``charter.cli.common``
(and with it the compiler): 0 ok, 1 user error, 2 usage error, 3 internal error.
"""

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
