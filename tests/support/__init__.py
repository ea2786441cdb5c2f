"""What tests share besides fixtures: helpers, types and constants, imported by test modules
and conftest files as ``from tests.support.<module> import ...``.

Fixtures live in conftest files (the root ``tests/conftest.py`` for what every directory
uses); a test module never imports a conftest module or another test module, it imports
from here.
"""
