"""hft/runner/job-started-hook.sh, run as actions/runner runs it (`bash -e PATH`, the job's
GITHUB_* variables, the event payload at GITHUB_EVENT_PATH): a fork's pull request and any
workflow but this repository's bench.yml fail before the job's first step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.ci,
    pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq (the runner installs it)"),
]

HOOK = Path(__file__).resolve().parents[2] / "hft" / "runner" / "job-started-hook.sh"
REPO = "acme/hft-bench"
BENCH = f"{REPO}/.github/workflows/bench.yml"


def hook(tmp_path: Path, event: str, payload: dict | None, workflow_ref: str) -> subprocess.CompletedProcess:
    path = tmp_path / "event.json"  # None: no payload file
    if payload is not None:
        path.write_text(json.dumps(payload))
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_WORKFLOW_REF": workflow_ref,
    }
    return subprocess.run(["bash", "-e", str(HOOK)], env=env, capture_output=True, text=True)


def pull_request(head_repo: str, number: int = 7) -> dict:
    return {
        "number": number,
        "pull_request": {"number": number, "head": {"repo": {"full_name": head_repo}},
                         "base": {"repo": {"full_name": REPO}}},
        "repository": {"full_name": REPO},
    }  # fmt: skip


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
def test_a_fork_pull_request_is_refused(tmp_path, event):
    r = hook(tmp_path, event, pull_request("mallory/hft-bench"), f"{BENCH}@refs/pull/7/merge")
    assert r.returncode != 0 and "from the fork 'mallory/hft-bench'" in r.stderr


def test_a_pull_request_from_a_deleted_head_repository_is_refused(tmp_path):
    payload = pull_request(REPO)
    payload["pull_request"]["head"]["repo"] = None
    r = hook(tmp_path, "pull_request", payload, f"{BENCH}@refs/pull/7/merge")
    assert r.returncode != 0 and "unknown head repository" in r.stderr


@pytest.mark.parametrize(
    "workflow_ref",
    [
        f"{REPO}/.github/workflows/ci.yml@refs/heads/main",
        f"{REPO}/.github/workflows/evil.yml@refs/pull/7/merge",
        "mallory/hft-bench/.github/workflows/bench.yml@refs/heads/main",
        f"{REPO}/.github/workflows/bench.yml.evil.yml@refs/heads/main",
        "",
    ],
)
def test_another_workflow_is_refused(tmp_path, workflow_ref):
    r = hook(tmp_path, "push", {"ref": "refs/heads/main", "repository": {"full_name": REPO}}, workflow_ref)
    assert r.returncode != 0 and "is not acme/hft-bench/.github/workflows/bench.yml" in r.stderr


def test_a_same_repository_pull_request_runs(tmp_path):
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("event", ["push", "workflow_dispatch"])
def test_a_push_to_main_and_a_run_by_hand_run(tmp_path, event):
    r = hook(tmp_path, event, {"ref": "refs/heads/main", "repository": {"full_name": REPO}},
             f"{BENCH}@refs/heads/main")  # fmt: skip
    assert r.returncode == 0, r.stderr


def test_a_pull_request_without_its_payload_is_refused(tmp_path):
    r = hook(tmp_path, "pull_request", None, f"{BENCH}@refs/pull/7/merge")
    assert r.returncode != 0 and "without a readable payload" in r.stderr
