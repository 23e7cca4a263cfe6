"""Bad input: exit 2 within 2 s (the contract's bound, generous for a process start) with
exactly one stderr line that names the flag or address."""

import subprocess

import pytest
from conformance import binary

# measuring: the contract's 2 s to exit on bad input, on the real binaries
pytestmark = [pytest.mark.measuring, pytest.mark.timeout(30)]

BAD_INPUTS = {
    "unknown-flag": (["--no-such-flag", "1"], "--no-such-flag"),
    "zero-connections": (["--connections", "0"], "--connections"),
    "negative-orders": (["--orders", "-5"], "--orders"),
    "rate-not-a-number": (["--rate", "abc"], "--rate"),
    # Port 9 (discard) has no listener on a test machine: connection refused.
    "unreachable-url": (["--url", "http://127.0.0.1:9"], "127.0.0.1:9"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=str)
def test_bad_input_exits_2_with_one_line_naming_it(client, case, tmp_path):
    args, named = BAD_INPUTS[case]
    argv = [str(binary(f"client-{client}")), *args, "--orders", "10", "--output", str(tmp_path / "r.json")]
    if case == "negative-orders":
        argv = argv[:-4] + argv[-2:]  # keep the bad --orders only
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=2.0, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"client-{client} {' '.join(args)}: no exit within 2 s")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr: {proc.stderr!r}"
    assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
    assert named in lines[0], f"the line does not name {named!r}: {lines[0]!r}"
