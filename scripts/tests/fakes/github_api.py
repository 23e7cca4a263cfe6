"""A local stand-in for the GitHub REST calls the CI scripts make: issues, issue comments,
pull-request (issue) comments and check runs (created, as scripts/ci/check-run does). State
lives in memory and is dumped to STATE.json after every request, so a test (or a workflow
under act) reads what GitHub would show.

    python github_api.py STATE [--token T] [--login L] [--seed SEED.json]
        writes STATE.port once listening; STATE.json after each request

`--token` is the only accepted bearer token (401 otherwise); what it creates is authored by
`--login`. `--seed` preloads {"issues": [...], "comments": [...], "check_runs": [...]} (e.g.
someone else's comment carrying a marker). Importable: `FakeGitHub(state_path, ...)` runs it
on a thread.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse


class State:
    def __init__(self, path: Path, login: str, seed: dict | None = None):
        self.path, self.login, self.lock = path, login, threading.Lock()
        seed = seed or {}
        self.issues: list[dict] = list(seed.get("issues", []))
        self.comments: list[dict] = list(seed.get("comments", []))
        self.check_runs: list[dict] = list(seed.get("check_runs", []))
        self.next_id = 1000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def doc(self) -> dict:
        return {"issues": self.issues, "comments": self.comments, "check_runs": self.check_runs}

    def dump(self) -> None:
        self.path.with_suffix(".json").write_text(json.dumps(self.doc()))


def handler(state: State, token: str):
    class Api(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code: int, doc) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def route(self, method: str) -> None:
            if self.headers.get("Authorization") != f"Bearer {token}":
                self.reply(401, {"message": "Bad credentials"})
                return
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            payload = {}
            if method in ("POST", "PATCH"):
                payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            with state.lock:
                code, doc = self.dispatch(method, url.path, query, payload)
                state.dump()
            self.reply(code, doc)

        def dispatch(self, method, path, query, payload):
            if re.fullmatch(r"/repos/[^/]+/[^/]+/check-runs", path) and method == "POST":
                return self.check_run(payload)
            m = re.fullmatch(r"/repos/[^/]+/[^/]+/issues(?:/(\d+))?(/comments)?", path)
            c = re.fullmatch(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)", path)
            if c and method == "PATCH":
                for comment in state.comments:
                    if comment["id"] == int(c[1]):
                        comment["body"] = payload["body"]
                        return 200, comment
                return 404, {"message": "Not Found"}
            if not m:
                return 404, {"message": "Not Found"}
            number, comments = (int(m[1]) if m[1] else None), bool(m[2])
            page, per_page = int(query.get("page", 1)), int(query.get("per_page", 30))
            if number is None and method == "GET":
                found = [
                    i
                    for i in state.issues
                    if i["state"] == query.get("state", "open")
                    and (not query.get("labels") or query["labels"] in [lb["name"] for lb in i["labels"]])
                ]
                return 200, found[(page - 1) * per_page : page * per_page]
            if number is None and method == "POST":
                issue = {
                    "number": len(state.issues) + 1,
                    "title": payload["title"],
                    "body": payload.get("body", ""),
                    "labels": [{"name": n} for n in payload.get("labels", [])],
                    "state": "open",
                    "user": {"login": state.login},
                }
                state.issues.append(issue)
                return 201, issue
            if comments and method == "GET":
                found = [x for x in state.comments if x["issue_number"] == number]
                return 200, found[(page - 1) * per_page : page * per_page]
            if comments and method == "POST":
                comment = {
                    "id": state.new_id(),
                    "issue_number": number,
                    "body": payload["body"],
                    "user": {"login": state.login},
                }
                state.comments.append(comment)
                return 201, comment
            if method == "PATCH":
                for issue in state.issues:
                    if issue["number"] == number:
                        issue.update({k: v for k, v in payload.items() if k in ("title", "body", "state")})
                        return 200, issue
            return 404, {"message": "Not Found"}

        def check_run(self, payload):
            """POST check-runs, validated as GitHub does where the CI relies on it: a name and
            a 40-digit head_sha; a completed run needs a conclusion GitHub knows; an output needs
            a title and a summary (at most 65,535 characters)."""
            known = {"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}
            output = payload.get("output")
            problems = [
                not payload.get("name"),
                not re.fullmatch(r"[0-9a-f]{40}", str(payload.get("head_sha", ""))),
                payload.get("status", "queued") == "completed" and payload.get("conclusion") not in known,
                output is not None and not (output.get("title") and output.get("summary")),
                output is not None and len(str(output.get("summary", ""))) > 65_535,
            ]
            if any(problems):
                return 422, {"message": "Validation Failed", "payload": payload}
            run = {"id": state.new_id(), **payload, "app": {"slug": "github-actions"}}
            state.check_runs.append(run)
            return 201, run

        def do_GET(self):
            self.route("GET")

        def do_POST(self):
            self.route("POST")

        def do_PATCH(self):
            self.route("PATCH")

    return Api


class FakeGitHub:
    """The fake on a thread: `.url` for GITHUB_API_URL, `.state()` for what it holds."""

    def __init__(
        self,
        state_path: Path,
        token: str = "test-token",
        login: str = "github-actions[bot]",
        seed: dict | None = None,
    ):
        self.store = State(Path(state_path), login, seed)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler(self.store, token))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def state(self) -> dict:
        with self.store.lock:
            return json.loads(json.dumps(self.store.doc()))


def recording_curl(folder: Path) -> str:
    """A PATH whose curl first appends its arguments to folder/argv, one a line, then runs the
    real curl: a test reads what the CI script put on curl's command line (ps shows those to
    every user, so a token must never be one)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "curl"
    argv, curl = folder / "argv", shutil.which("curl")
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >>"{argv}"\nexec {curl} "$@"\n')
    wrapper.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("state", type=Path)
    p.add_argument("--token", default="test-token")
    p.add_argument("--login", default="github-actions[bot]")
    p.add_argument("--seed", type=Path)
    args = p.parse_args()
    seed = json.loads(args.seed.read_text()) if args.seed else None
    store = State(args.state, args.login, seed)
    store.dump()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler(store, args.token))
    args.state.with_suffix(".port").write_text(str(srv.server_address[1]))
    srv.serve_forever()


if __name__ == "__main__":
    main()
