"""scripts/ci/fetch-store: the history store of gh-pages, read with the job's token.

No gh-pages branch (the first run) is not an error; a remote that cannot be read is one (exit 2,
naming the fix), never a silent "no baseline, not compared". The token reaches git as an HTTP
header through its environment, for the GitHub server only, never as an argument."""

from __future__ import annotations

import base64
import http.server
import json
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "fetch-store-test-token"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def checkout(tmp_path):
    """A checkout holding scripts/ci, as the job's (fetch-store fetches into its refs)."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(ROOT / "scripts" / "ci", repo / "scripts" / "ci")
    return repo


def fetch_store(checkout: Path, url: str, out: Path, **env: str) -> subprocess.CompletedProcess:
    """fetch-store OUT in `checkout`, whose origin is `url`."""
    subprocess.run(["git", "-C", str(checkout), "remote", "remove", "origin"], capture_output=True)
    git(checkout, "remote", "add", "origin", url)
    base = {"PATH": "/usr/bin:/bin", "HOME": str(checkout), "GIT_TERMINAL_PROMPT": "0"}
    cmd = [str(checkout / "scripts/ci/fetch-store"), str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, env={**base, **env})


def bare_with_pages(tmp_path: Path, store: dict | None) -> Path:
    """A bare origin with a main commit and, when `store` is given, a gh-pages whose data/ holds it."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    ident = ("-c", "user.name=t", "-c", "user.email=t@example.com")
    git(work, *ident, "commit", "-q", "--allow-empty", "-m", "main")
    git(work, "push", "-q", str(origin), "main")
    if store is not None:
        git(work, "checkout", "-q", "--orphan", "gh-pages")
        (work / "data").mkdir()
        (work / "data" / "index.json").write_text(json.dumps(store))
        git(work, "add", "data")
        git(work, *ident, "commit", "-q", "-m", "history")
        git(work, "push", "-q", str(origin), "gh-pages")
    return origin


def test_a_readable_gh_pages_store_is_copied_and_fetched_for_publish(checkout, tmp_path):
    origin = bare_with_pages(tmp_path, {"schema_version": 1})
    r = fetch_store(checkout, str(origin), tmp_path / "store")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "store" / "index.json").read_text()) == {"schema_version": 1}
    assert git(checkout, "rev-parse", "refs/remotes/origin/gh-pages").strip()


def test_no_gh_pages_branch_is_the_first_run_not_an_error(checkout, tmp_path):
    origin = bare_with_pages(tmp_path, None)
    r = fetch_store(checkout, str(origin), tmp_path / "store")
    assert r.returncode == 0 and "no gh-pages branch" in r.stderr, r.stderr
    assert not (tmp_path / "store" / "index.json").exists()


def test_an_unreadable_remote_fails_naming_the_fix(checkout, tmp_path):
    r = fetch_store(checkout, str(tmp_path / "no-such-repo.git"), tmp_path / "store")
    assert r.returncode == 2, r.stderr
    assert "cannot read" in r.stderr and "GITHUB_TOKEN" in r.stderr and "contents: read" in r.stderr
    assert not (tmp_path / "store" / "index.json").exists()


class _Private(http.server.BaseHTTPRequestHandler):
    """A private repository's git endpoint: records the Authorization header, answers 401."""

    seen: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).seen.append(self.headers.get("Authorization", ""))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def private_server():
    _Private.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Private)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_private_repo_gets_the_token_as_a_header_and_a_refusal_is_an_error(
    checkout, tmp_path, private_server
):
    url = f"{private_server}/acme/hft-bench.git"
    r = fetch_store(checkout, url, tmp_path / "store", GITHUB_TOKEN=TOKEN, GITHUB_SERVER_URL=private_server)
    assert r.returncode == 2 and "cannot read" in r.stderr and "GITHUB_TOKEN" in r.stderr, r.stderr
    want = "basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert _Private.seen and all(h.lower() == want.lower() for h in _Private.seen), _Private.seen
    assert TOKEN not in r.stderr + r.stdout and want.split()[1] not in r.stderr + r.stdout
    # Another server than GITHUB_SERVER_URL never gets the token.
    _Private.seen.clear()
    r = fetch_store(checkout, url, tmp_path / "store", GITHUB_TOKEN=TOKEN)
    assert r.returncode == 2 and _Private.seen and not any(_Private.seen), _Private.seen
