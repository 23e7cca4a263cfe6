"""What the test folders of scripts/tests share. Each folder's own set-up is a fixture in its
conftest.py (commands/: pool_legs; ci/: act_world, bare_world, runner_loop_world; judge/:
gates); the plain helpers and constants that tests call are modules of support/, imported by
name (`from support.gate_synth import latency_run`): pytest puts this folder, the home of this
conftest.py, on sys.path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

BIN = Path(__file__).resolve().parents[2] / "bin"
# What every measuring test of these folders starts: the server and the gate's client. A test
# that needs more (client-rust, a second client, perf) says so in a skipif of its own.
REAL_BINARIES = ("hft-server", "client-hft")


@pytest.fixture(scope="session")
def real_binaries() -> Path:
    """The real bin/ that `make build` leaves: skips the test where it lacks one, naming the fix.
    Taking it (itself, through a fixture such as pool_legs, or by usefixtures) is what makes a
    test `measuring` (the root conftest.py): it runs in make test's serial pass."""
    missing = [name for name in REAL_BINARIES if not os.access(BIN / name, os.X_OK)]
    if missing:
        pytest.skip(f"needs {', '.join(f'bin/{name}' for name in missing)}: run `make build`")
    return BIN
