"""The stand-ins and constants of test_runner_loop.py and its world (ci/conftest.py's
runner_loop_world): GitHub's REST API and broker as a runner loop sees
them (App installation tokens, generate-jitconfig, a job or the broker's error), the stand-in
runner (fixtures/fake-runner) as a release tarball, and crontab / at where they are not
installed."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

FAKE_RUNNER = Path(__file__).parents[1] / "fixtures" / "fake-runner"
REPO = "acme/hft-bench"
APP_ID, INSTALLATION_ID = "123", "456"
ROOT = Path(__file__).resolve().parents[3]
INSTALLER = ROOT / "hft" / "runner" / "install-runner.sh"
VERSIONS = ("2.329.0", "2.330.0")
CALIBRATION = {"guards": [{"series": "latency-1c/hft", "metric": "p99", "guarded": True, "why_not": None}]}
# How long a loop or an install may run before it counts as hung. Not a speed: this module runs in
# make test's parallel pass, under SCHED_IDLE beside the serial one, and with one core busy it
# can get no CPU for minutes (the back-off test ran past 120 s in a clean clone's make test,
# 2026-11-29). pytest.ini's 600 s still stops a test whose waits add up past it.
HANG_S = 540


PLANT = """
echo '* * * * * echo hft-planted' | {crontab} -
echo 'echo hft-planted' | {at} now + 1 hour
ipcmk -S 1
for d in /dev/shm /tmp /var/tmp; do echo planted >"$d/hft-planted-$(id -u)"; done
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
echo planted >"$HOME/planted"
echo "job 1 planted"
echo "calibration: $HFTBENCH_CALIBRATION guards $(jq '.guards | length' "$HFTBENCH_CALIBRATION")"
if [ -e "$HOME/.hft-bench-hook-token" ]; then echo "READ TOKEN LEFT"; else echo "read token gone"; fi
"""

CHECK = """
bad=0
left() {{ echo "LEFT: $*"; bad=1; }}
{crontab} -l 2>/dev/null | grep -q hft-planted && left crontab
[ -z "$({atq})" ] || left "at job"
ipcs -s | awk -v u="$(id -un)" '$3 == u' | grep -q . && left semaphore
for d in /dev/shm /tmp /var/tmp; do [ -e "$d/hft-planted-$(id -u)" ] && left "$d"; done
pgrep -U "$(id -u)" -x sleep >/dev/null && left "background process"
[ -e "$HOME/planted" ] && left home
[ "$bad" = 0 ] && echo "job 2 clean"
exit "$bad"
"""


def b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class FakeGitHub:
    """generate-jitconfig and App installation tokens as GitHub answers them (a token asked
    with a body is narrowed by it: the job-started hook's read token; DELETE /installation/token
    revokes the token it is sent with); /_fake/ hands the
    stand-in runner its job (GitHub's broker) and takes its result. A job that starts with "!"
    is the broker's error of that kind instead ({"errorKind": ...}: RunnerVersionTooOld,
    SessionFailure, SessionConflict); with no job left, the runner's registration is gone
    (RunnerNotFound), as for a JIT runner whose job went elsewhere."""

    def __init__(self, public_key: Path, jobs: list[str]):
        self.public_key, self.jobs = public_key, list(jobs)
        self.tokens: list[dict] = []  # JWT payloads of the minted tokens
        self.token_bodies: list[dict | None] = []  # what each asked for (None: the App's all)
        self.revoked: list[str] = []  # tokens revoked with DELETE /installation/token
        self.jit_requests: list[dict] = []
        self.results: list[dict] = []
        self.errors: list[str] = []
        self.deleted: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code: int, body: dict | str):
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(code)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlparse(self.path)
                if url.path == "/_fake/job" and fake.jobs and fake.jobs[0].startswith("!"):
                    kind = fake.jobs.pop(0)[1:]
                    self.reply(
                        409 if kind == "SessionConflict" else 403, {"errorKind": kind, "message": kind}
                    )
                elif url.path == "/_fake/job" and fake.jobs:
                    event = {"ref": "refs/heads/main", "repository": {"full_name": REPO}}
                    workflow = f"{REPO}/.github/workflows/bench.yml@refs/heads/main"
                    self.reply(
                        200,
                        {
                            "repository": REPO,
                            "event_name": "push",
                            "workflow_ref": workflow,
                            "event": event,
                            "script": fake.jobs.pop(0),
                        },
                    )
                elif url.path == "/_fake/job":
                    self.reply(404, {"errorKind": "RunnerNotFound", "message": "Runner not found"})
                else:
                    self.reply(404, {"message": "Not Found"})

            def do_DELETE(self):
                url = urlparse(self.path)
                if url.path == "/installation/token":
                    fake.revoked.append(self.headers.get("Authorization", "").removeprefix("Bearer "))
                    self.reply(204, "")
                    return
                ok = self.headers.get("Authorization") == f"Bearer ghs_test{len(fake.tokens)}"
                fake.deleted.append(url.path if ok else f"unauthorized {url.path}")
                self.reply(204 if ok else 401, "")

            def do_POST(self):
                url = urlparse(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization", "")
                try:
                    if url.path == f"/app/installations/{INSTALLATION_ID}/access_tokens":
                        fake.tokens.append(fake.check_jwt(auth.removeprefix("Bearer ")))
                        fake.token_bodies.append(json.loads(body) if body else None)
                        self.reply(
                            201,
                            {"token": f"ghs_test{len(fake.tokens)}", "expires_at": "2099-01-01T00:00:00Z"},
                        )
                    elif url.path == f"/repos/{REPO}/actions/runners/generate-jitconfig":
                        assert auth == f"Bearer ghs_test{len(fake.tokens)}", f"not the fresh token: {auth!r}"
                        req = json.loads(body)
                        fake.jit_requests.append(req)
                        self.reply(201, fake.jit_config(req, self.server.server_address[1]))
                    elif url.path == "/_fake/result":
                        q = {k: v[0] for k, v in parse_qs(url.query).items()}
                        fake.results.append({**q, "output": body.decode()})
                        self.reply(200, {})
                    else:
                        self.reply(404, {"message": "Not Found"})
                except Exception as e:  # noqa: BLE001  (reported by the test, not swallowed)
                    fake.errors.append(f"{url.path}: {e!r}")
                    self.reply(401, {"message": str(e)})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def check_jwt(self, jwt: str) -> dict:
        head, payload, sig = jwt.split(".")
        assert json.loads(b64url_decode(head)) == {"alg": "RS256", "typ": "JWT"}
        claims = json.loads(b64url_decode(payload))
        assert claims["iss"] == APP_ID and claims["exp"] - claims["iat"] <= 600, claims
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "sig").write_bytes(b64url_decode(sig))
            (Path(d) / "data").write_bytes(f"{head}.{payload}".encode())
            r = subprocess.run(
                [
                    "openssl",
                    "dgst",
                    "-sha256",
                    "-verify",
                    str(self.public_key),
                    "-signature",
                    f"{d}/sig",
                    f"{d}/data",
                ],
                capture_output=True,
            )
            assert r.returncode == 0, "JWT signature does not verify with the App's public key"
        return claims

    def jit_config(self, req: dict, port: int) -> dict:
        n = len(self.jit_requests)
        runner = {
            "agentId": n,
            "agentName": req["name"],
            "poolId": req["runner_group_id"],
            "serverUrl": f"http://127.0.0.1:{port}/_fake",
            "gitHubUrl": f"https://github.com/{REPO}",
            "workFolder": req["work_folder"],
            "ephemeral": True,
        }
        files = {
            ".runner": runner,
            ".credentials": {"scheme": "OAuth", "data": {"clientId": f"c{n}"}},
            ".credentials_rsaparams": {"d": "secret", "modulus": "m"},
        }
        enc = {k: base64.b64encode(json.dumps(v).encode()).decode() for k, v in files.items()}
        jit = base64.b64encode(json.dumps(enc).encode()).decode()
        return {"runner": {"id": n, "name": req["name"]}, "encoded_jit_config": jit}


def runner_tarball(dest: Path, version: str) -> str:
    """The stand-in runner as a release tarball at DEST/v<version>/; its sha256."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(FAKE_RUNNER.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(FAKE_RUNNER)), recursive=False)
    out = dest / f"v{version}" / f"actions-runner-linux-x64-{version}.tar.gz"
    out.parent.mkdir(parents=True)
    out.write_bytes(buf.getvalue())
    return hashlib.sha256(buf.getvalue()).hexdigest()


def stub_tools(bindir: Path, spool: Path) -> dict[str, str]:
    """crontab, at, atq, atrm: the real ones when installed, else stand-ins keeping one file per
    entry in SPOOL (the loop finds them first on its PATH; the jobs call them by path)."""
    spool.mkdir(mode=0o1777)
    spool.chmod(0o1777)
    stubs = {
        "crontab": 'u=$(id -un); op=""\nwhile [ $# -gt 0 ]; do case $1 in -u) u=$2; shift 2;;'
        " -l) op=l; shift;; -r) op=r; shift;; -) op=i; shift;; *) exit 2;; esac; done\n"
        'f=SPOOL/cron.$u\ncase $op in l) cat "$f";; r) rm "$f";; i) cat >"$f";; esac',
        "at": 'cat >"SPOOL/at.$(id -un).$$"',
        "atq": 'for f in SPOOL/at.*; do [ -e "$f" ] || continue; u=${f#SPOOL/at.}; u=${u%.*}\n'
        '[ "$(id -u)" = 0 ] || [ "$u" = "$(id -un)" ] || continue\n'
        'printf "%s\\tThu Nov 26 10:00:00 2026 a %s\\n" "${f##*.}" "$u"; done',
        "atrm": 'for id in "$@"; do rm -f SPOOL/at.*."$id"; done',
    }
    tools = {}
    for name, body in stubs.items():
        if shutil.which(name):
            tools[name] = shutil.which(name)
            continue
        path = bindir / name
        path.write_text(
            "#!/bin/sh\n# stand-in: not installed on this machine\n"
            + body.replace("SPOOL", str(spool))
            + "\n"
        )
        path.chmod(0o755)
        tools[name] = str(path)
    return tools
