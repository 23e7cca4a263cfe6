"""No two Python modules of pytest's testpaths share a file name (conftest.py aside).

pytest's default import mode puts each test folder on sys.path and imports a module by its
bare name, so `clients/python/tests/test_stats.py` and `scripts/tests/judge/test_stats.py` break
the collection of one full run ("import file mismatch"), and a helper module shadows its
namesake. A suite run alone never shows it; this check does, in any run."""

from __future__ import annotations

import configparser
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PYTEST_INI = ROOT / "pytest.ini"
PER_FOLDER = {"conftest.py", "__init__.py"}  # pytest imports these by path, not by name


def configured_testpaths(ini: Path) -> list[str]:
    config = configparser.ConfigParser()
    config.read(ini)
    return config["pytest"]["testpaths"].split()


def clashes(root: Path, folders: list[str]) -> dict[str, list[str]]:
    """{file name: [paths relative to root]} for each name used by more than one module."""
    seen: dict[str, list[str]] = defaultdict(list)
    for folder in folders:
        for module in sorted((root / folder).rglob("*.py")):
            if module.name not in PER_FOLDER and "__pycache__" not in module.parts:
                seen[module.name].append(str(module.relative_to(root)))
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_no_two_test_modules_share_a_name():
    assert clashes(ROOT, configured_testpaths(PYTEST_INI)) == {}


def test_the_check_finds_a_planted_clash_across_testpaths(tmp_path):
    planted = [
        "a/tests/test_stats.py",
        "b/tests/test_stats.py",
        "a/tests/conftest.py",
        "b/tests/conftest.py",
        "a/tests/helpers.py",
        "b/tests/sub/helpers.py",
        "b/tests/test_only_here.py",
    ]
    for rel in planted:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = a/tests b/tests\n")
    assert clashes(tmp_path, configured_testpaths(tmp_path / "pytest.ini")) == {
        "test_stats.py": ["a/tests/test_stats.py", "b/tests/test_stats.py"],
        "helpers.py": ["a/tests/helpers.py", "b/tests/sub/helpers.py"],
    }
