"""The stand-in runner's run.sh and run-helper.sh (fixtures/fake-runner) turn the listener's
exit code into run.sh's as actions/runner's do (src/Misc/layoutroot/run.sh:17-28,
run-helper.sh.template:36-81 at commit 258d6c8; the stand-ins cite each line): only 7, and
only with ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1 in run.sh's environment, leaves
non-zero; 2, 3 and 4 restart the listener; everything else is 0. So hft-runner-loop cannot
learn from run.sh that no job ran (test_runner_loop.py runs the loop on it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

FAKE_RUNNER = Path(__file__).parents[1] / "fixtures" / "fake-runner"


def run_sh(tmp_path: Path, codes: list[int], deprecated_var: str | None) -> tuple[int, int, str]:
    """run.sh with a listener that exits with CODES in turn: (run.sh's exit, listener starts, output)."""
    root = tmp_path / "runner"
    shutil.copytree(FAKE_RUNNER, root)
    (root / "safe_sleep.sh").write_text("#!/bin/bash\n")  # the helper's waits, not taken here
    counter = tmp_path / "starts"
    codes_file = tmp_path / "codes"
    codes_file.write_text("\n".join(map(str, codes)) + "\n")
    (root / "bin" / "Runner.Listener").write_text(
        "#!/bin/bash\n"
        f'echo x >>"{counter}"\n'
        f'n=$(wc -l <"{counter}")\n'
        f'exit "$(sed -n "${{n}}p" "{codes_file}")"\n'
    )
    env = {"PATH": os.environ["PATH"], "RUNNER_ALLOW_RUNASROOT": "1"}  # run-helper.sh.template:3-8
    if deprecated_var is not None:
        env["ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE"] = deprecated_var
    r = subprocess.run([str(root / "run.sh")], env=env, capture_output=True, text=True, timeout=30)
    starts = len(counter.read_text().splitlines()) if counter.exists() else 0
    return r.returncode, starts, r.stdout + r.stderr


@pytest.mark.parametrize(
    ("listener", "want"),
    [
        (0, 0),  # Success: the job ran (or the registration was gone, Runner.cs:899)
        (1, 0),  # TerminatedError: "no retry needed"
        (5, 0),  # SessionConflict
        (6, 0),  # RunnerConfigurationRefreshed never leaves the listener; unknown here
        (7, 7),  # RunnerVersionDeprecated, with the variable
        (42, 0),  # unknown
    ],
)
def test_run_sh_exits_as_the_real_one_does(tmp_path, listener, want):
    rc, starts, out = run_sh(tmp_path, [listener], "1")
    assert (rc, starts) == (want, 1), out


@pytest.mark.parametrize("value", [None, "", "0", "true"])
def test_a_deprecated_version_is_0_without_the_variable_in_run_shs_environment(tmp_path, value):
    """run-helper.sh and run.sh compare the variable with "1" themselves; the runner's .env
    reaches only the listener (Program.cs:172-196), so the loop must set it where it starts
    run.sh."""
    rc, _, out = run_sh(tmp_path, [7], value)
    assert rc == 0 and "Exiting with unknown error code: 7" in out, out


@pytest.mark.parametrize("first", [2, 3, 4])
def test_a_retryable_error_or_an_update_restarts_the_listener(tmp_path, first):
    rc, starts, out = run_sh(tmp_path, [first, 1], "1")
    assert (rc, starts) == (0, 2) and "Restarting runner..." in out, out
