"""hft/runner/job-started-hook.sh, run as actions/runner runs it, on jobs that are not the
pinned repository's own bench.yml: a pull request whose code comes from another repository
(whatever the event), another repository of the organization, an event bench.yml does not run
on, another workflow, a hook without its pinned repository, a job without a readable payload.
Each refusal names its reason. Which bench.yml runs (protected branches, pull requests compared
with their base's) is in test_job_started_hook_bench_yml.py."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.hook_world import (
    BENCH,
    FORK,
    FORK_REASON,
    HOOK,
    NEEDS_JQ_AND_CURL,
    REPO,
    SIBLING,
    hook,
    pull_request,
    push,
    refused,
)

# Each test starts from main's bench.yml at main's tip and at the merge commit (the
# `contents` fixture of conftest.py), whether it reads the stand-in GitHub or not.
pytestmark = [pytest.mark.ci, NEEDS_JQ_AND_CURL, pytest.mark.usefixtures("contents")]


# ---- a fork, whatever the event


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
def test_a_fork_pull_request_is_refused(tmp_path, event):
    r = hook(tmp_path, event, pull_request(FORK), f"{BENCH}@refs/pull/7/merge")
    assert refused(r, FORK_REASON), r.stderr


def test_a_forks_pull_request_review_is_refused(tmp_path):
    """The held-out check's way in: a fork's bench.yml adds `on: pull_request_review`; its
    workflow ref (…/bench.yml@refs/pull/7/merge) passes the workflow check. Two reasons now."""
    payload = {**pull_request(FORK), "action": "submitted", "review": {"state": "approved"}}
    r = hook(tmp_path, "pull_request_review", payload, f"{BENCH}@refs/pull/7/merge")
    assert refused(r, FORK_REASON, "event 'pull_request_review' is not one bench.yml runs on"), r.stderr


def test_a_comment_on_a_forks_pull_request_is_refused(tmp_path):
    """issue_comment runs the default branch's workflow; its payload names the pull request
    (.issue.pull_request) but not where its head comes from."""
    payload = {
        "action": "created",
        "repository": {"full_name": REPO},
        "comment": {"body": "/bench"},
        "issue": {"number": 7, "pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/7"}},
    }
    r = hook(tmp_path, "issue_comment", payload)
    assert refused(
        r,
        "issue_comment names a pull request from a deleted or unknown head repository",
        "event 'issue_comment' is not one bench.yml runs on",
    ), r.stderr


def test_a_workflow_run_of_a_forks_pull_request_is_refused(tmp_path):
    """workflow_run runs the default branch's workflow after one of a fork's ran: the head
    repository is the fork's, both at .workflow_run.head_repository and in its pull requests."""
    payload = {
        "action": "completed",
        "repository": {"full_name": REPO},
        "workflow_run": {
            "event": "pull_request",
            "head_branch": "feature",
            "head_repository": {"full_name": FORK},
            "repository": {"full_name": REPO},
            "pull_requests": [
                {
                    "number": 7,
                    "head": {
                        "ref": "feature",
                        "repo": {"id": 1, "url": f"https://api.github.com/repos/{FORK}", "name": "hft-bench"},
                    },
                }
            ],
        },
    }
    r = hook(tmp_path, "workflow_run", payload)
    assert refused(r, f"workflow_run {FORK_REASON}", "event 'workflow_run' is not one bench.yml runs on"), (
        r.stderr
    )


def test_a_fork_is_refused_even_under_an_allowed_event_name(tmp_path):
    """Whatever the event: a payload that names a fork's pull request is refused on that alone."""
    r = hook(tmp_path, "push", {**push(), "pull_request": pull_request(FORK)["pull_request"]})
    assert refused(r, f"push {FORK_REASON}") and "is not one bench.yml runs on" not in r.stderr, r.stderr


def test_a_pull_request_from_a_deleted_head_repository_is_refused(tmp_path):
    r = hook(tmp_path, "pull_request", pull_request(None), f"{BENCH}@refs/pull/7/merge")
    assert refused(r, "from a deleted or unknown head repository"), r.stderr


# ---- another repository, another event, another workflow


def test_another_repository_of_the_same_organization_is_refused(tmp_path):
    """The runner group may let every repository of the organization in (the Default group);
    the repository pinned at install time does not."""
    r = hook(
        tmp_path, "push", push(SIBLING), f"{SIBLING}/.github/workflows/bench.yml@refs/heads/main", SIBLING
    )
    assert refused(
        r,
        f"repository '{SIBLING}' is not {REPO}, the one repository this runner was installed for",
        f"workflow '{SIBLING}/.github/workflows/bench.yml@refs/heads/main' is not {BENCH}",
        f"push payload of repository '{SIBLING}', not {REPO}",
    ), r.stderr


def test_a_payload_of_another_repository_is_refused(tmp_path):
    r = hook(tmp_path, "push", push(SIBLING))
    assert refused(r, f"push payload of repository '{SIBLING}', not {REPO}"), r.stderr


@pytest.mark.parametrize(
    "event",
    [
        "pull_request_target",
        "pull_request_review",
        "pull_request_review_comment",
        "schedule",
        "merge_group",
        "check_suite",
        "repository_dispatch",
        "workflow_call",
        "release",
        "",
    ],
)
def test_an_event_bench_yml_does_not_run_on_is_refused(tmp_path, event):
    r = hook(tmp_path, event, pull_request(REPO) if event.startswith("pull_request") else push())
    assert refused(r, f"event '{event}' is not one bench.yml runs on (push, pull_request, workflow_dispatch)")
    assert "from '" not in r.stderr, "a same-repository payload has no other reason"


@pytest.mark.parametrize(
    "workflow_ref",
    [
        f"{REPO}/.github/workflows/ci.yml@refs/heads/main",
        f"{REPO}/.github/workflows/evil.yml@refs/pull/7/merge",
        f"{FORK}/.github/workflows/bench.yml@refs/heads/main",
        f"{REPO}/.github/workflows/bench.yml.evil.yml@refs/heads/main",
        f"{BENCH}@",
        "",
    ],
)
def test_another_workflow_is_refused(tmp_path, workflow_ref):
    r = hook(tmp_path, "push", push(), workflow_ref)
    assert refused(r, f"workflow '{workflow_ref}' is not {BENCH}"), r.stderr


# ---- the hook itself


@pytest.mark.parametrize("pinned", [[], ["--repo"], ["--repo", ""], ["--repo", "acme"], ["--repo", "a/b/c"]])
def test_an_unpinned_hook_refuses_everything(tmp_path, pinned):
    r = hook(tmp_path, "push", push(), pinned=pinned)
    assert refused(r, "no repository pinned", "install-runner.sh --repo OWNER/REPO"), r.stderr


def test_the_repository_comes_from_the_pin_not_from_the_job(tmp_path):
    """A runner pinned to acme/other refuses acme/hft-bench's own, otherwise perfect job."""
    r = hook(tmp_path, "push", push(), pinned=["--repo", SIBLING])
    assert refused(r, f"repository '{REPO}' is not {SIBLING}"), r.stderr


def test_a_job_without_its_payload_is_refused(tmp_path):
    r = hook(tmp_path, "pull_request", None, f"{BENCH}@refs/pull/7/merge")
    assert refused(r, "pull_request event without a readable payload"), r.stderr


def test_a_payload_that_is_not_json_is_refused(tmp_path):
    (tmp_path / "event.json").write_text("{not json")
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_WORKFLOW_REF": f"{BENCH}@refs/heads/main",
    }
    r = subprocess.run(["bash", "-e", str(HOOK), "--repo", REPO], env=env, capture_output=True, text=True)
    assert refused(r, "push payload") and "is not JSON" in r.stderr, r.stderr


def test_a_same_repository_pull_request_and_its_review_differ_only_by_the_event(tmp_path):
    ok = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge")
    assert ok.returncode == 0, ok.stderr
    review = hook(tmp_path, "pull_request_review", pull_request(REPO), f"{BENCH}@refs/pull/7/merge")
    assert refused(review, "event 'pull_request_review'") and "from '" not in review.stderr, review.stderr
