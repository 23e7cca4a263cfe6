"""Builds hb_print (the order and result printer of the shared C library) once per session."""

import subprocess
from pathlib import Path

import pytest

COMMON = Path(__file__).resolve().parents[1]
ROOT = COMMON.parents[1]
HB_PRINT = ROOT / "build" / "common-c" / "hb_print"


@pytest.fixture(scope="session")
def hb_print() -> Path:
    subprocess.run(["make", "-s", "-f", str(COMMON / "common.mk"), str(HB_PRINT)], check=True, cwd=ROOT)
    return HB_PRINT
