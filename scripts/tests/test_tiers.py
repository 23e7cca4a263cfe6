"""The root conftest.py's lists name real test modules, and the serial pass ends with the
modules whose length follows the host's noise (LATE_MODULES), in their order."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
tiers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiers)


def test_every_listed_module_exists():
    listed = {*tiers.MEASURING_MODULES, *tiers.ACT_MODULES, *tiers.SLOW_MODULES, *tiers.LATE_MODULES}
    assert sorted(rel for rel in listed if not (ROOT / rel).is_file()) == []


class _Item:
    def __init__(self, rel: str):
        self.path = ROOT / rel
        self.fixturenames = ()

    def iter_markers(self, name):
        return iter(())

    def add_marker(self, mark):
        pass


def test_the_late_modules_come_last_in_their_order_and_the_rest_keep_theirs():
    rels = ["scripts/tests/test_bisect.py", "clients/tests/test_conformance_latency.py",
            "scripts/tests/test_ab.py", "scripts/tests/test_faults.py", "scripts/tests/test_ci_push_path.py",
            "scripts/tests/test_ab.py"]  # fmt: skip
    items = [_Item(rel) for rel in rels]
    tiers.pytest_collection_modifyitems(items)
    assert [item.path.relative_to(ROOT).as_posix() for item in items] == [
        "clients/tests/test_conformance_latency.py",
        "scripts/tests/test_faults.py",
        "scripts/tests/test_ab.py",
        "scripts/tests/test_ab.py",
        "scripts/tests/test_bisect.py",
        "scripts/tests/test_ci_push_path.py",
    ]
