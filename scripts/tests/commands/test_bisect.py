"""`hftbench bisect` on a 4-commit temporary repository whose "server" wraps the real
bin/hft-server (as in test_ab.py: a commit's build installs its server.sh, so a step costs
no cargo build). Commit 3 slows every order by less than the gate's threshold: the answer
must be a range with its reason, never a wrong commit. A slowdown found in its commit, in two
steps that place one candidate on each side, is the push path's (test_ci_push_path.py: the
bisect main-bench starts from the regression's verdict, through the issue it opens). Plus the
decisions and the record as pure functions (test_midpoint_and_steps_left_halve_the_range
and test_the_record_names_the_culprit_only_when_the_range_closed: the halving of longer
ranges, 8 commits in 3 steps)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hftbench import answers, cli
from hftbench.bisect_record import BisectRecord, BisectStep, StepComparison
from hftbench.commands import bisect as bisect_cmd
from hftbench.judge import bisect_steps as bs
from hftbench.publish import bisect_text
from hftbench.verdict import Flag

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "bin" / "hft-server"
CLIENT = ROOT / "bin" / "client-hft"
BUILD = "mkdir -p bin && install -m 755 server.sh bin/hft-server"

needs_binaries = pytest.mark.usefixtures("real_binaries")  # conftest.py: skips without bin/; measuring


@pytest.mark.parametrize(
    ("vs_good", "vs_bad", "side"),
    [
        (answers.REGRESSION, answers.NO_CHANGE, bs.BAD),
        (answers.REGRESSION, answers.REGRESSION, bs.BAD),  # part of the slowdown is in already
        (answers.NO_CHANGE, answers.REGRESSION, bs.GOOD),
        (answers.IMPROVEMENT, answers.REGRESSION, bs.GOOD),
        (answers.NO_CHANGE, answers.NO_CHANGE, bs.UNDECIDED),  # below the threshold both ways
        (answers.NO_CHANGE, answers.INCONCLUSIVE, bs.UNDECIDED),  # like good, bad not shown slower
        (answers.INCONCLUSIVE, answers.REGRESSION, bs.GOOD),  # the slowdown shown lies after it
        (answers.INCONCLUSIVE, answers.INCONCLUSIVE, bs.UNDECIDED),
    ],
)
def test_a_candidate_is_placed_only_on_evidence(vs_good, vs_bad, side):
    assert bs.side_of(vs_good, vs_bad) == side


def test_midpoint_and_steps_left_halve_the_range():
    assert bs.midpoint(0, 7) == 3 and bs.midpoint(3, 4) is None
    assert [bs.steps_left(0, n) for n in (1, 2, 3, 4, 7, 8)] == [0, 1, 2, 2, 3, 3]


def _step(sha, decision, ratio):
    cmp = StepComparison(answers.REGRESSION, ratio, [ratio - 0.1, ratio + 0.1])
    return BisectStep(
        sha,
        f"s {sha}",
        good="a",
        bad="h",
        range=["a", "h"],
        rounds=8,
        vs_good=cmp,
        vs_bad=cmp,
        decision=decision,
    )


def test_the_record_names_the_culprit_only_when_the_range_closed():
    commits = [bs.Commit(s, f"subject {s}") for s in "abcdefgh"]
    steps = [_step("d", bs.GOOD, 1.0), _step("f", bs.BAD, 1.5), _step("e", bs.BAD, 1.4)]
    done = bs.result(commits, 3, 4, steps, reason=None, series="latency-1c/hft", metric="p50_us").to_json()
    assert done["status"] == bs.CULPRIT and done["culprit"] == {"sha": "e", "subject": "subject e"}
    assert (done["good"], done["bad"]) == ("d", "e") and done["effect"]["ratio"] == 1.4
    assert BisectRecord.from_json(json.loads(json.dumps(done))).to_json() == done  # read back whole
    cut = bs.result(
        commits,
        3,
        5,
        steps[:2],
        reason="time budget of 60 s spent after 2 steps",
        series="x/y",
        metric="p50_us",
    )
    assert cut.status == bs.BETWEEN and cut.culprit is None and (cut.good, cut.bad) == ("d", "f")
    assert "Between `d` (good) and `f` (bad): time budget" in bisect_text.bisect_headline(cut)


def _flag(series: str, metric: str, ratio: float, verdict: str = answers.REGRESSION) -> dict:
    scenario, client = series.split("/")
    return {"scenario": scenario, "client": client, "metric": metric, "ratio": ratio, "verdict": verdict}


VERDICT = {
    "suite": "pr",
    "base": {"commit": "b" * 40},
    "head": {"commit": "h" * 40},
    "flags": [
        _flag("latency-1c/hft", "p50_us", 1.12),
        _flag("latency-4c/rust", "p99_us", 1.40),
        _flag("latency-1c/go", "throughput_rps", 0.60),  # 1/0.60: 1.67 times slower, the worst
        _flag("latency-1c/c", "p99_us_drift", 3.0),  # a trend within runs: no metric to bisect
        _flag("latency-1c/cpp", "p99_us", 0.5, answers.IMPROVEMENT),
    ],
}


def _filled(tmp_path: Path, **given) -> bs.Target:
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(VERDICT))
    flags = {"good": None, "bad": None, "series": None, "metric": None, "suite": "x", **given}
    return bisect_cmd.fill_from_verdict(path, bs.Target(**flags))


def test_from_a_verdict_the_regression_that_slowed_its_series_most_is_bisected(tmp_path, capsys):
    args = _filled(tmp_path)
    assert (args.good, args.bad, args.suite) == ("b" * 40, "h" * 40, "pr")
    assert (args.series, args.metric) == ("latency-1c/go", "throughput_rps")
    said = capsys.readouterr().err
    assert "bisecting latency-1c/go throughput (-40.0% in the verdict), the largest of 3 regressions" in said


def test_a_series_or_metric_given_picks_among_its_own_regressions(tmp_path):
    assert _filled(tmp_path, series="latency-4c/rust").metric == "p99_us"
    assert _filled(tmp_path, metric="p50_us").series == "latency-1c/hft"
    assert (
        bs.regressions_by_slowdown(
            [Flag(**_flag("a/b", "p99_us_drift", 2.0)), Flag(**_flag("a/b", "p99_us", 0.8, "improvement"))]
        )
        == []
    )


COMMITS = 4  # good (commit 1), two candidates, bad (commit 4): a step to each side of commit 3


def _repo(path: Path, delays: dict[int, int]) -> Path:
    """COMMITS commits of server.sh; commit i runs the real server with --inject-delay-us delays[i]."""
    path.mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)

    git("init", "-q")
    for i in range(1, COMMITS + 1):
        delay = delays.get(i, 0)
        extra = f"--inject-delay-us {delay} " if delay else ""
        (path / "server.sh").write_text(f'#!/bin/sh\n# commit {i}\nexec {SERVER} {extra}"$@"\n')
        git("add", "server.sh")
        git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", f"commit {i}")
    return path


def _bisect(repo: Path, out: Path) -> int:
    return cli.main(
        [
            "bisect",
            "--repo",
            str(repo),
            "--good",
            f"HEAD~{COMMITS - 1}",
            "--bad",
            "HEAD",
            "--series",
            "latency-1c/hft",
            "--metric",
            "p50_us",
            "--orders",
            "1000",
            "--repeats",
            "8",
            "--max-repeats",
            "8",
            "--step",
            "8",
            "--out",
            str(out),
            "--build-cmd",
            BUILD,
            "--quiet",
        ]
    )


def _sha(repo: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", ref], capture_output=True, text=True
    ).stdout.strip()


@needs_binaries
def test_a_slowdown_within_the_noise_is_answered_with_a_range_not_a_commit(tmp_path, capsys):
    # 1 µs more an order on a ~20 µs median: well inside the gate's ±10 %
    repo = _repo(tmp_path / "repo", {i: 1 for i in range(3, COMMITS + 1)})
    assert _bisect(repo, tmp_path / "out") == 1
    doc = json.loads((tmp_path / "out" / "bisect.json").read_text())
    assert doc["status"] == "between" and doc["culprit"] is None
    # Never a wrong commit: the range it gives still holds commit 3. A step may have called a
    # side (the gate flags a 5 % effect now and then: its power there is not zero), so the
    # range is any that holds the culprit, and the step that stopped says why.
    commits = [_sha(repo, f"HEAD~{COMMITS - k}") for k in range(1, COMMITS + 1)]  # commit k at index k - 1
    assert commits.index(doc["good"]) < 2 <= commits.index(doc["bad"])
    assert doc["steps"][-1]["decision"] == "undecided"
    assert doc["reason"].startswith(f"step {len(doc['steps'])}: ")
    # as it goes, the step table on stderr (--quiet keeps it); at the end, the range on stdout
    printed = capsys.readouterr()
    assert f"| {len(doc['steps'])} | `" in printed.err
    assert printed.out.startswith(f"Between {doc['good'][:10]} (good) and {doc['bad'][:10]} (bad): step ")
