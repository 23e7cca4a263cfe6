"""hft/runner/job-started-hook.sh, run as actions/runner runs it, on the jobs of the pinned
repository: only the events bench.yml runs on, and only bench.yml as a protected branch has it (a
push or a run by hand of a protected branch; a pull request into one whose bench.yml is the
branch's, byte for byte, asked of a stand-in GitHub with the job's read token, which the hook
deletes whatever the verdict). The refusals of other repositories, forks, events, workflows and
of a hook without its pins are in test_job_started_hook_foreign_jobs.py."""

from __future__ import annotations

import pytest
from support.hook_world import (
    BENCH,
    FORK,
    FORK_REASON,
    MAIN_BENCH,
    MERGE_SHA,
    NEEDS_JQ_AND_CURL,
    REPO,
    TOKEN,
    accepted,
    bench_events,
    dispatch,
    hook,
    pull_request,
    push,
    refused,
)

# Each test starts from main's bench.yml at main's tip and at the merge commit (the
# `contents` fixture of conftest.py), whether it reads the stand-in GitHub or not.
pytestmark = [pytest.mark.ci, NEEDS_JQ_AND_CURL, pytest.mark.usefixtures("contents")]


# ---- what runs


def test_the_hook_accepts_exactly_the_events_bench_yml_runs_on(tmp_path):
    """bench.yml's `on:` is the list; a new trigger there needs the hook's ALLOWED_EVENTS too."""
    events = bench_events()
    assert events == {"push", "pull_request", "workflow_dispatch"}, events
    for event in events:
        payload = pull_request(REPO) if event == "pull_request" else push()
        ref = f"{BENCH}@refs/pull/7/merge" if event == "pull_request" else f"{BENCH}@refs/heads/main"
        r = hook(tmp_path, event, payload, ref)
        assert r.returncode == 0 and f"{event} of {ref} accepted" in r.stderr, (event, r.stderr)


# ---- which bench.yml: only as a protected branch has it


def test_a_push_to_main_and_a_run_by_hand_on_main_are_let_through_without_asking_github(tmp_path, contents):
    """A protected branch's bench.yml is the reviewed one: nothing to compare, no API call."""
    assert accepted(hook(tmp_path, "push", push()), "push", "refs/heads/main")
    assert accepted(hook(tmp_path, "workflow_dispatch", dispatch()), "workflow_dispatch", "refs/heads/main")
    assert contents.asked == []
    assert not (tmp_path / "home" / ".hft-bench-hook-token").exists(), "the read token is gone, used or not"


@pytest.mark.parametrize(
    "ref",
    ["refs/heads/feature", "refs/heads/main-2", "refs/heads/release", "refs/tags/v1.0", "refs/pull/7/merge"],
)
def test_a_push_of_another_branch_is_refused(tmp_path, contents, ref):
    """The issue's case: a branch whose own bench.yml says `on: push` for itself runs that
    bench.yml, unreviewed; its workflow ref names the branch."""
    r = hook(tmp_path, "push", push(ref=ref), f"{BENCH}@{ref}")
    assert refused(
        r,
        f"push runs the bench.yml of '{ref}', not of a protected branch (main)",
        "a branch's own bench.yml is not reviewed",
    ), r.stderr
    assert contents.asked == []


def test_a_run_by_hand_on_another_branch_is_refused(tmp_path):
    r = hook(tmp_path, "workflow_dispatch", dispatch("refs/heads/feature"), f"{BENCH}@refs/heads/feature")
    assert refused(
        r, "workflow_dispatch runs the bench.yml of 'refs/heads/feature', not of a protected branch"
    ), r.stderr


def test_the_usual_pull_request_into_main_with_mains_bench_yml_is_let_through(tmp_path, contents):
    """Same repository, into main, bench.yml untouched: the hook asks GitHub for bench.yml at the
    workflow's sha and at main's tip, with the job's read token, and deletes the token's file."""
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge")
    assert accepted(r, "pull_request", "refs/pull/7/merge"), r.stderr
    assert contents.asked == [(MERGE_SHA, f"Bearer {TOKEN}"), ("refs/heads/main", f"Bearer {TOKEN}")]
    assert not (tmp_path / "home" / ".hft-bench-hook-token").exists()
    assert TOKEN not in r.stderr


@pytest.mark.parametrize(
    "theirs",
    [
        MAIN_BENCH.replace(b"runs-on: ubuntu-latest", b"runs-on: [self-hosted, hft-tuned]", 1),
        MAIN_BENCH + b"\n",  # one more byte is another file
        MAIN_BENCH.replace(b"\n", b"\r\n"),
        b"",
    ],
    ids=["edited", "a-trailing-newline", "crlf", "empty"],
)
def test_a_pull_request_whose_bench_yml_is_not_mains_is_refused(tmp_path, contents, theirs):
    contents.files[MERGE_SHA] = theirs
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge")
    assert refused(
        r,
        f"the bench.yml of this pull_request (workflow sha {MERGE_SHA}, sha256 ",
        "is not main's (sha256 ",
        "a pull request runs here only with its base's reviewed bench.yml",
    ), r.stderr


@pytest.mark.parametrize("base_ref", ["develop", "release", "main-old", ""])
def test_a_pull_request_into_another_branch_is_refused_without_asking(tmp_path, contents, base_ref):
    """Its base's bench.yml is no reviewed one, whatever the pull request's is."""
    r = hook(tmp_path, "pull_request", pull_request(REPO, base_ref=base_ref), f"{BENCH}@refs/pull/7/merge")
    assert refused(r, f"pull_request into '{base_ref}', not into a protected branch (main)"), r.stderr
    assert contents.asked == []


def test_a_pull_request_is_refused_when_the_hook_has_no_read_token(tmp_path, contents):
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge", token=None)
    assert refused(
        r,
        f"cannot tell whether the bench.yml of this pull_request (workflow sha '{MERGE_SHA}') is main's",
        "is main's: no read token",
        "Contents: Read-only",
    ), r.stderr
    assert contents.asked == []


@pytest.mark.parametrize(
    ("token", "files", "said"),
    [
        ("ghs_expired", None, "returned error: 401"),
        (TOKEN, {"refs/heads/main": MAIN_BENCH}, f"answered for .github/workflows/bench.yml at {MERGE_SHA}"),
        (TOKEN, {MERGE_SHA: MAIN_BENCH}, "answered for .github/workflows/bench.yml at refs/heads/main"),
        ('ghs_x"\nheader = x', None, "the read token in "),
    ],
    ids=["a-refused-token", "no-file-at-the-sha", "no-file-on-main", "a-malformed-token"],
)
def test_a_pull_request_is_refused_when_github_cannot_say(tmp_path, contents, token, files, said):
    if files is not None:
        contents.files = files
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge", token=token)
    assert refused(r, "cannot tell whether the bench.yml of this pull_request", said), r.stderr


@pytest.mark.parametrize("sha", ["", "main", "A" * 40, "a" * 39])
def test_a_pull_request_without_its_workflow_sha_is_refused(tmp_path, contents, sha):
    r = hook(tmp_path, "pull_request", pull_request(REPO), f"{BENCH}@refs/pull/7/merge", sha=sha)
    assert refused(r, "cannot tell whether", "GITHUB_WORKFLOW_SHA is not a commit sha"), r.stderr
    assert contents.asked == []


def test_the_read_token_is_gone_before_a_step_runs_whatever_the_verdict(tmp_path, contents):
    """A fork's pull request is refused before GitHub is asked; the token's file is deleted all the same."""
    r = hook(tmp_path, "pull_request", pull_request(FORK), f"{BENCH}@refs/pull/7/merge")
    assert refused(r, FORK_REASON) and contents.asked == [], r.stderr
    assert not (tmp_path / "home" / ".hft-bench-hook-token").exists()


def test_the_protected_branches_are_the_installed_list(tmp_path, contents):
    """--protected main,release: a push of release runs; a pull request into release is compared
    with release's bench.yml (not main's)."""
    release_bench = MAIN_BENCH.replace(b"name: bench", b"name: bench # release", 1)
    assert release_bench != MAIN_BENCH
    contents.files["refs/heads/release"] = release_bench
    both = "main,release"
    assert accepted(
        hook(tmp_path, "push", push(ref="refs/heads/release"), f"{BENCH}@refs/heads/release", protected=both),
        "push",
        "refs/heads/release",
    )
    into_release = pull_request(REPO, base_ref="release")
    r = hook(tmp_path, "pull_request", into_release, f"{BENCH}@refs/pull/7/merge", protected=both)
    assert refused(r, "is not release's (sha256 "), r.stderr
    contents.files[MERGE_SHA] = release_bench
    r = hook(tmp_path, "pull_request", into_release, f"{BENCH}@refs/pull/7/merge", protected=both)
    assert accepted(r, "pull_request", "refs/pull/7/merge"), r.stderr
    assert contents.asked[-1] == ("refs/heads/release", f"Bearer {TOKEN}")
    r = hook(tmp_path, "push", push(ref="refs/heads/main"), protected="release")
    assert refused(r, "not of a protected branch (release)"), r.stderr


@pytest.mark.parametrize("protected", ["", "main,,release", "main release", "../main", "-x", "main,", "ma*n"])
def test_a_bad_protected_list_refuses_everything(tmp_path, protected):
    r = hook(tmp_path, "push", push(), protected=protected)
    assert refused(r, f"--protected '{protected}' is not a comma list of branch names"), r.stderr
