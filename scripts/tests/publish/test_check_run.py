"""The verdict as a check run (publish/check_run.py, `hftbench check-run`, scripts/ci/check-run):
unknown is not green. Each status's conclusion exactly; an inconclusive verdict neutral, its
summary saying how many runs a side would settle it; the script posts the body to the stand-in
REST API (fakes/github_api.py), the token never an argument, and fails exactly on a failure."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hftbench.publish import check_run
from hftbench.verdict import Verdict

sys.path.insert(0, str(Path(__file__).parents[1] / "fakes"))
from github_api import FakeGitHub, recording_curl  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "ci" / "check-run"
SCRIPTS = ROOT / "scripts"
HEAD = "b" * 40
TOKEN = "ghs_check0run0token"


def _row(metric="p50_us", verdict="no_change", ratio=1.0, ci=(0.99, 1.01), gated=True, **extra):
    return {
        "scenario": "latency-1c",
        "client": "hft",
        "metric": metric,
        "gated": gated,
        "base_runs": 16,
        "head_runs": 16,
        "min_samples": 50000,
        "threshold": 1.10,
        "verdict": verdict,
        "ratio": ratio,
        "ci": list(ci),
        "p_value": 0.2,
        "p_adjusted": 0.4,
        "base_value": 20.0,
        "head_value": 20.0 * (ratio or 1),
        "reason": None,
        "mde": 1.06,
        "settle_runs": None,
        **extra,
    }


def _doc(status, rows, exit_code=None, **extra) -> dict:
    return {
        "schema_version": 1,
        "status": status,
        "exit_code": int(status in ("regression", "invalid")) if exit_code is None else exit_code,
        "gates": "bench-config/gates.yaml",
        "confidence": 0.95,
        "looks": 1,
        "suite": "pr",
        "base": {"commit": "a" * 40, "ref": "main", "runs": 16},
        "head": {"commit": HEAD, "ref": "feature/x", "runs": 16},
        "results": rows,
        **extra,
    }


def decide(doc: dict) -> check_run.CheckRun:
    return check_run.decide(Verdict.from_json(doc))


SETTLE = "the interval is not inside -9.1% … +10.0%: about 40 runs a side would settle it"
UNDECIDED = _row("p99_us", "inconclusive", 1.04, (0.97, 1.12), settle_runs=40, reason=SETTLE)


@pytest.mark.parametrize(
    ("status", "want"),
    [
        ("no_change", "success"),
        ("slower", "success"),
        ("faster", "success"),
        ("improvement", "success"),
        ("inconclusive", "neutral"),
        ("regression", "failure"),
        ("invalid", "failure"),
        ("not_gated", "failure"),  # a row's answer, never a verdict's: not one the check passes
        ("something_new", "failure"),
        ("", "failure"),
        (None, "failure"),
    ],
)
def test_each_status_has_exactly_one_conclusion_and_unknown_is_never_green(status, want):
    assert check_run.conclusion(status) == want


def test_a_failing_pool_check_or_a_failing_exit_or_nothing_tested_is_never_green():
    assert check_run.conclusion("no_change", check_passes=False) == "failure"
    assert check_run.conclusion("inconclusive", check_passes=False) == "failure"
    assert check_run.conclusion("no_change", exit_code=3) == "failure"
    assert check_run.conclusion("inconclusive", exit_code=1) == "failure"
    # No gated row was tested: nothing was judged, so grey, not green.
    assert check_run.conclusion("no_change", tested=False) == "neutral"
    assert check_run.conclusion("regression", tested=False) == "failure"


def test_an_inconclusive_verdict_is_neutral_and_names_the_runs_that_would_settle_it():
    run = decide(
        _doc("inconclusive", [UNDECIDED, _row("p50_us", "inconclusive", 1.0, (0.95, 1.05), settle_runs=12)])
    )
    assert run.conclusion == "neutral" and not run.fails
    # The largest estimate of the undecided rows, in the headline's words (answers.settle_text).
    assert run.title == (
        "🟡 Inconclusive: 2 of 2 gated series × metrics undecided; about 40 runs a side would settle it"
    )
    lead = run.summary.split("\n\n", 1)[0]
    assert lead == (
        "**Neutral, not green**: the gate could not decide. About 40 runs a side would settle it."
    )
    assert "## 🟡 Inconclusive" in run.summary  # then the verdict's own text


def test_an_estimate_out_of_reach_and_no_estimate_are_said_as_the_verdict_says_them():
    far = _row("p99_us", "inconclusive", 1.0, (0.5, 2.0), settle_runs=1563)
    lead = decide(_doc("inconclusive", [far])).summary.split("\n\n", 1)[0]
    assert lead.endswith(
        "More than 200 runs a side would be needed to settle it: out of reach, the series is too "
        "noisy on this runner (read its MDE)."
    )
    few = _row("p99_us", "inconclusive", 1.02, (0.9, 1.2), reason="2 repeats < min_repeats 4")
    run = decide(_doc("inconclusive", [few]))
    assert run.conclusion == "neutral"
    assert run.summary.startswith(
        "**Neutral, not green**: the gate could not decide. No estimate of the runs that would "
        "settle it: 2 repeats &lt; min\\_repeats 4."
    )


def test_regression_and_invalid_fail_and_say_why():
    reg = decide(_doc("regression", [_row("p99_us", "regression", 1.3, (1.2, 1.4))]))
    assert (reg.conclusion, reg.title) == ("failure", "❌ Regression: latency-1c/hft P99 +30.0%")
    assert reg.fails and reg.summary.startswith("**Failure**: a gated metric regressed.\n\n## ❌ Regression")
    bad = decide(_doc("invalid", [_row("errors", "invalid", None, (0, 0), reason="base failed orders")]))
    assert bad.conclusion == "failure" and bad.fails
    assert bad.summary.startswith(
        "**Failure**: the verdict is `invalid`, not an answer the gate can pass (what is not judged "
        "cannot be green)."
    )
    odd = decide(_doc("mystery @team", [_row()]))
    assert odd.conclusion == "failure" and "@team" not in odd.title and "@\u200bteam" in odd.title


def test_a_verdict_whose_own_exit_fails_is_a_failure_and_an_undecided_one_still_says_what_would_settle_it():
    run = decide(_doc("inconclusive", [UNDECIDED], exit_code=1))
    assert run.conclusion == "failure" and run.fails
    assert run.summary.split("\n\n", 1)[0] == (
        "**Failure**: undecided, and the verdict fails its own check (exit status 1; its rows say "
        "why). About 40 runs a side would settle it."
    )
    odd = decide(_doc("no_change", [_row()], exit_code=2))
    assert odd.conclusion == "failure"
    assert odd.summary.startswith("**Failure**: the verdict fails its own check (exit status 2).")


def test_a_pass_is_success_unless_the_pool_check_fails_or_nothing_was_tested():
    ok = decide(_doc("no_change", [_row()]))
    assert (ok.conclusion, ok.fails) == ("success", False)
    assert ok.title.startswith("✅ No change: all 1 gated series × metrics within ±10%")
    assert ok.summary.startswith("**Success**: the gate decided, and nothing regressed.\n\n")
    why = ["leg b interrupted: judged on the rounds it completed"]
    pool = {
        "runners": [],
        "missing": ["b"],
        "partial": True,
        "alone": [],
        "check": {"passes": False, "why": why},
    }
    cut = decide(_doc("no_change", [_row()], exit_code=3, pool=pool, partial=True))
    assert cut.conclusion == "failure" and cut.title.endswith("; the pool's check fails")
    assert cut.summary.startswith(
        "**Failure**: the pool's check fails, whatever the verdict (`no_change`): leg b interrupted"
    )
    untested = decide(_doc("no_change", [_row(gated=False, verdict="not_gated", reason="reported only")]))
    assert untested.conclusion == "neutral"
    assert untested.summary.startswith("**Neutral, not green**: no gated metric could be tested")


def test_no_verdict_is_a_failure_and_the_payload_is_the_api_s_body():
    run = check_run.decide(None, why="no such file", run_url="https://github.com/acme/x/actions/runs/5")
    assert (run.conclusion, run.title) == ("failure", "No verdict")
    assert run.summary == (
        "**Failure**: there is no verdict to read: no such file.\n\n"
        "[The job's log](https://github.com/acme/x/actions/runs/5)"
    )
    assert run.payload(HEAD) == {
        "name": "bench verdict (gate)",
        "head_sha": HEAD,
        "status": "completed",
        "conclusion": "failure",
        "output": {"title": "No verdict", "summary": run.summary},
    }


def test_a_huge_verdict_stays_within_github_s_summary_limit():
    rows = [
        _row("p99_us", "inconclusive", 1.0, (0.5, 2.0), settle_runs=9, scenario=f"s{i:04d}" + "x" * 80)
        for i in range(2000)
    ]
    run = decide(_doc("inconclusive", rows))
    assert len(run.summary) <= check_run.SUMMARY_LIMIT and run.conclusion == "neutral"
    assert len(run.title) <= check_run.TITLE_LIMIT


def test_the_command_runs_without_numpy_or_scipy_and_exits_1_only_on_failure(tmp_path):
    """scripts/ci/check-run runs `python3 -m hftbench check-run` on the bare hosted runner."""
    block = (
        "import sys, runpy; sys.modules.update(numpy=None, scipy=None); "
        "sys.argv = ['hftbench', *sys.argv[1:]]; runpy.run_module('hftbench', run_name='__main__')"
    )
    codes = {}
    for name, doc in (
        ("inconclusive", _doc("inconclusive", [UNDECIDED])),
        ("regression", _doc("regression", [_row("p99_us", "regression", 1.3, (1.2, 1.4))])),
        ("missing", None),
    ):
        path = tmp_path / f"{name}.json"
        if doc is not None:
            path.write_text(json.dumps(doc))
        r = subprocess.run(
            [sys.executable, "-c", block, "check-run", str(path), "--head-sha", HEAD],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"PYTHONPATH": str(SCRIPTS), "PATH": "/usr/bin:/bin"},
        )
        body = json.loads(r.stdout)
        codes[name] = (r.returncode, body["conclusion"], body["head_sha"], body["name"])
    assert codes == {
        "inconclusive": (0, "neutral", HEAD, "bench verdict (gate)"),
        "regression": (1, "failure", HEAD, "bench verdict (gate)"),
        "missing": (1, "failure", HEAD, "bench verdict (gate)"),
    }


def post(tmp_path: Path, api: FakeGitHub, verdict: Path, **env: str) -> subprocess.CompletedProcess:
    """scripts/ci/check-run VERDICT with a curl on PATH that records its arguments."""
    env = {
        "PATH": recording_curl(tmp_path),
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "acme/hft-bench",
        "GITHUB_API_URL": api.url,
        "HEAD_SHA": HEAD,
        "GITHUB_RUN_ID": "42",
        **env,
    }
    return subprocess.run([str(SCRIPT), str(verdict)], env=env, capture_output=True, text=True)


@pytest.mark.ci
@pytest.mark.skipif(shutil.which("jq") is None or shutil.which("curl") is None, reason="needs jq and curl")
def test_the_ci_step_posts_the_check_run_and_fails_the_job_only_on_failure(tmp_path):
    unsure, regressed = tmp_path / "unsure.json", tmp_path / "regressed.json"
    unsure.write_text(json.dumps(_doc("inconclusive", [UNDECIDED])))
    regressed.write_text(json.dumps(_doc("regression", [_row("p99_us", "regression", 1.3, (1.2, 1.4))])))
    with FakeGitHub(tmp_path / "api", token=TOKEN) as api:
        first = post(tmp_path, api, unsure)
        second = post(tmp_path, api, regressed)
        third = post(tmp_path, api, tmp_path / "absent.json")
        runs = api.state()["check_runs"]
    assert [r.returncode for r in (first, second, third)] == [0, 1, 1], first.stderr + second.stderr
    assert "check run 'bench verdict (gate)' on bbbbbbbbbb: neutral" in first.stderr, first.stderr
    assert [(r["name"], r["head_sha"], r["status"], r["conclusion"]) for r in runs] == [
        ("bench verdict (gate)", HEAD, "completed", c) for c in ("neutral", "failure", "failure")
    ]
    assert "About 40 runs a side would settle it." in runs[0]["output"]["summary"]
    assert runs[2]["output"]["title"] == "No verdict"
    assert "https://github.com/acme/hft-bench/actions/runs/42" in runs[2]["output"]["summary"]
    argv = (tmp_path / "argv").read_text()
    assert "-K" in argv.split("\n") and TOKEN not in argv, argv
    assert TOKEN not in first.stdout + first.stderr


@pytest.mark.ci
def test_the_ci_step_refuses_a_head_that_is_not_a_commit(tmp_path):
    with FakeGitHub(tmp_path / "api", token=TOKEN) as api:
        r = post(tmp_path, api, tmp_path / "v.json", HEAD_SHA="main; rm -rf /")
        assert r.returncode == 2 and "HEAD_SHA must be the pull request's head commit" in r.stderr
        assert api.state()["check_runs"] == []
