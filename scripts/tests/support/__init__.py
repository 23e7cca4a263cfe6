"""Plain helpers the test modules of scripts/tests import by name (set-up that a test takes is
a fixture in a conftest.py instead)."""
