"""The world of the job-started hook's tests (test_job_started_hook_*.py): the hook run as
actions/runner runs it (`bash -e PATH`, the job's GITHUB_* variables, the event payload at
GITHUB_EVENT_PATH, the install-time pins), a stand-in for GitHub's contents endpoint, and the
payloads of the events it judges."""

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

# The runner installs jq and curl; without them the hook cannot run here.
NEEDS_JQ_AND_CURL = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("jq", "curl")),
    reason="needs jq and curl (the runner installs them)",
)

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
