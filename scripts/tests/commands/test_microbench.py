"""`hftbench microbench` (bench.yml: scripts/ci/hftbench microbench): MICRO_SUITES (bench.yml's
repository variable) names the suites a push measures; a name it does not know is refused
before anything is built or measured."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "ci" / "hftbench"


@pytest.mark.parametrize("suites", ["go bogus", "none", "Criterion"])
def test_an_unknown_suite_is_refused_with_the_names_it_takes(tmp_path, suites):
    out = tmp_path / "micro"
    r = subprocess.run(
        [str(SCRIPT), "microbench", str(out)],
        env={**os.environ, "MICRO_SUITES": suites},
        capture_output=True,
        text=True,
        timeout=60,
    )
    bad = next(s for s in suites.split() if s not in ("criterion", "go", "pytest"))
    assert r.returncode == 2, r.stderr
    assert f"got '{bad}' in '{suites}'" in r.stderr and "criterion, go or pytest" in r.stderr, r.stderr
    assert "none turns micro-bench off in bench.yml" in r.stderr
    assert not out.exists()  # nothing measured, nothing written
