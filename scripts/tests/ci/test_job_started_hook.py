"""hft/runner/job-started-hook.sh, run as actions/runner runs it (`bash -e PATH`, the job's
GITHUB_* variables, the event payload at GITHUB_EVENT_PATH), with the repository and the
protected branches pinned at install time (`--repo`, `--protected`, written by install-runner.sh
into the line the runner runs): only that repository's bench.yml as a protected branch has it
(a push or a run by hand of a protected branch; a pull request into one whose bench.yml is the
branch's, byte for byte, asked of a stand-in GitHub with the job's read token), only for the
events bench.yml runs on, and never a pull request whose code comes from another repository,
whatever the event. Each refusal names its reason."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

pytestmark = [
    pytest.mark.ci,
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in ("jq", "curl")),
        reason="needs jq and curl (the runner installs them)",
    ),
]

ROOT = Path(__file__).resolve().parents[3]
HOOK = ROOT / "hft" / "runner" / "job-started-hook.sh"
REPO = "acme/hft-bench"
SIBLING = "acme/other"  # another repository of the same organization
FORK = "mallory/hft-bench"
BENCH = f"{REPO}/.github/workflows/bench.yml"
FORK_REASON = f"of a pull request from '{FORK}', not {REPO}: code of another repository"
TOKEN = "ghs_read1"  # the read token the loop leaves in the job's home
MERGE_SHA = "a" * 40  # GITHUB_WORKFLOW_SHA of a pull request: its merge commit
MAIN_BENCH = (ROOT / ".github" / "workflows" / "bench.yml").read_bytes()


class Contents:
    """GitHub's contents endpoint as the hook asks it: bench.yml at a ref, raw, for the read
    token only (401 otherwise), 404 for a ref it does not have. `files` maps a ref to the bytes;
    `asked` lists (ref, Authorization) in order."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.asked: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code: int, body: bytes):
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                url = urlparse(self.path)
                ref = parse_qs(url.query).get("ref", [""])[0]
                auth = self.headers.get("Authorization", "")
                fake.asked.append((ref, auth))
                if url.path != f"/repos/{REPO}/contents/.github/workflows/bench.yml":
                    self.reply(404, b'{"message": "Not Found"}')
                elif auth != f"Bearer {TOKEN}":
                    self.reply(401, b'{"message": "Bad credentials"}')
                elif self.headers.get("Accept") != "application/vnd.github.raw+json":
                    self.reply(415, b'{"message": "not the raw media type"}')
                elif ref not in fake.files:
                    self.reply(404, b'{"message": "No commit found for the ref"}')
                else:
                    self.reply(200, fake.files[ref])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@functools.cache
def github() -> Contents:
    return Contents()


@pytest.fixture(autouse=True)
def contents() -> Contents:
    """Before each test: main's bench.yml at main's tip and at the pull request's merge commit."""
    gh = github()
    gh.files = {"refs/heads/main": MAIN_BENCH, MERGE_SHA: MAIN_BENCH}
    gh.asked = []
    return gh


def hook(
    tmp_path: Path,
    event: str,
    payload: dict | None,
    workflow_ref: str = f"{BENCH}@refs/heads/main",
    repository: str = REPO,
    pinned: list[str] | None = None,
    *,
    sha: str = MERGE_SHA,
    token: str | None = TOKEN,
    protected: str | None = None,
) -> subprocess.CompletedProcess:
    path = tmp_path / "event.json"  # None: no payload file
    if payload is not None:
        path.write_text(json.dumps(payload))
    token_file = tmp_path / "home" / ".hft-bench-hook-token"  # where the loop leaves it
    token_file.parent.mkdir(exist_ok=True)
    token_file.unlink(missing_ok=True)
    if token is not None:
        token_file.write_text(token + "\n")
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": repository,
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_WORKFLOW_REF": workflow_ref,
        "GITHUB_WORKFLOW_SHA": sha,
    }
    if pinned is None:  # as install-runner.sh writes the line
        pinned = ["--repo", REPO, "--api", github().url, "--token-file", str(token_file)]
        pinned += [] if protected is None else ["--protected", protected]
    return subprocess.run(["bash", "-e", str(HOOK), *pinned], env=env, capture_output=True, text=True)


def refused(r: subprocess.CompletedProcess, *reasons: str) -> bool:
    return r.returncode == 1 and all(reason in r.stderr for reason in reasons) and "refused: " in r.stderr


def accepted(r: subprocess.CompletedProcess, event: str, ref: str) -> bool:
    return (
        r.returncode == 0 and f"{event} of {BENCH}@{ref} accepted" in r.stderr and "refused" not in r.stderr
    )


def pull_request(head_repo: str | None, number: int = 7, base: str = REPO, base_ref: str = "main") -> dict:
    head = {
        "repo": None if head_repo is None else {"full_name": head_repo},
        "ref": "feature",
        "sha": "c" * 40,
    }
    return {
        "number": number,
        "repository": {"full_name": base},
        "pull_request": {
            "number": number,
            "head": head,
            "base": {"repo": {"full_name": base}, "ref": base_ref, "sha": "b" * 40},
        },
    }


def push(repository: str = REPO, ref: str = "refs/heads/main") -> dict:
    return {"ref": ref, "repository": {"full_name": repository}}


def dispatch(ref: str = "refs/heads/main") -> dict:
    return {"ref": ref, "repository": {"full_name": REPO}, "inputs": {"suite": "stress"}}


def bench_events() -> set[str]:
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "bench.yml").read_text())
    on = doc.get("on", doc.get(True))  # PyYAML reads the bare key `on` as True
    return set(on)


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
