"""Fixtures of the judge's tests."""

from __future__ import annotations

import pytest
from hftbench.judge.gates import load_gates


@pytest.fixture(scope="module")
def gates():
    """The real bench-config/gates.yaml, read once a module (test_compare.py, test_failures.py)."""
    return load_gates()
