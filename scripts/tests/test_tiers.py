"""The root conftest.py's lists of modules (measuring, act, slow) name real test modules: a
renamed module would otherwise drop out of its tier without a word."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
tiers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiers)


def test_every_listed_module_exists():
    listed = {*tiers.MEASURING_MODULES, *tiers.ACT_MODULES, *tiers.SLOW_MODULES}
    assert sorted(rel for rel in listed if not (ROOT / rel).is_file()) == []
