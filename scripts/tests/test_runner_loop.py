"""The runner loop for real, as root, in a scratch root: hft/runner/install-runner.sh installs
it (--root, with a stand-in GitHub API on 127.0.0.1 and a stand-in runner tarball), then the
installed hft-runner-loop runs two jobs as a dedicated test user. The stand-in runner
(fixtures/fake-runner) makes the writes and starts the processes actions/runner's source shows
(hft/runner/README.md lists them); each fails its job on EACCES. The first job plants a cron
entry, an at job, a SysV semaphore, files in /dev/shm, /tmp and /var/tmp and a background
process; the second finds none of them.

systemd cannot run units on the test VM (`systemctl is-system-running` says offline), so the
loop runs with --job-runner direct: the job unit's ExecStart as the user, without the unit's
sandbox; the sandbox directives are checked by parsing the generated unit (and the loop's
scrub is what clears the first job's leftovers here)."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import pwd
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = [
    pytest.mark.ci,
    pytest.mark.skipif(os.geteuid() != 0, reason="runs jobs as a dedicated user it creates: needs root"),
    pytest.mark.skipif(
        any(shutil.which(t) is None for t in ("jq", "openssl", "curl", "setpriv", "useradd", "ipcmk")),
        reason="needs jq, openssl, curl, setpriv (util-linux), useradd and ipcmk",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "hft" / "runner" / "install-runner.sh"
FAKE_RUNNER = Path(__file__).parent / "fixtures" / "fake-runner"
REPO = "acme/hft-bench"
APP_ID, INSTALLATION_ID = "123", "456"
VERSIONS = ("2.329.0", "2.330.0")


def b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class FakeGitHub:
    """generate-jitconfig and App installation tokens as GitHub answers them; /_fake/ hands the
    stand-in runner its job (GitHub's broker) and takes its result."""

    def __init__(self, public_key: Path, jobs: list[str]):
        self.public_key, self.jobs = public_key, list(jobs)
        self.tokens: list[dict] = []  # JWT payloads of the minted tokens
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
                if url.path == "/_fake/job" and fake.jobs:
                    event = {"ref": "refs/heads/main", "repository": {"full_name": REPO}}
                    workflow = f"{REPO}/.github/workflows/bench.yml@refs/heads/main"
                    self.reply(200, {"repository": REPO, "event_name": "push", "workflow_ref": workflow,
                                     "event": event, "script": fake.jobs.pop(0)})  # fmt: skip
                else:
                    self.reply(404, {"message": "Not Found"})

            def do_DELETE(self):
                url = urlparse(self.path)
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
            r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(self.public_key),
                                "-signature", f"{d}/sig", f"{d}/data"], capture_output=True)  # fmt: skip
            assert r.returncode == 0, "JWT signature does not verify with the App's public key"
        return claims

    def jit_config(self, req: dict, port: int) -> dict:
        n = len(self.jit_requests)
        runner = {"agentId": n, "agentName": req["name"], "poolId": req["runner_group_id"],
                  "serverUrl": f"http://127.0.0.1:{port}/_fake", "gitHubUrl": f"https://github.com/{REPO}",
                  "workFolder": req["work_folder"], "ephemeral": True}  # fmt: skip
        files = {".runner": runner, ".credentials": {"scheme": "OAuth", "data": {"clientId": f"c{n}"}},
                 ".credentials_rsaparams": {"d": "secret", "modulus": "m"}}  # fmt: skip
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


PLANT = """
echo '* * * * * echo hft-planted' | {crontab} -
echo 'echo hft-planted' | {at} now + 1 hour
ipcmk -S 1
for d in /dev/shm /tmp /var/tmp; do echo planted >"$d/hft-planted-$(id -u)"; done
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
echo planted >"$HOME/planted"
echo "job 1 planted"
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


@pytest.fixture(scope="module")
def world():
    user = f"hftjob{os.getpid() % 100000}"
    root = Path(tempfile.mkdtemp(prefix="hft-runner-root-", dir="/var/tmp"))
    root.chmod(0o755)  # the job user must reach the hook and its runner copy inside
    subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", user], check=True)  # fmt: skip
    uid = pwd.getpwnam(user).pw_uid
    try:
        outside = root / "outside"  # what is not the machine's: downloads, keys, stubs
        (outside / "bin").mkdir(parents=True)
        key, pub = outside / "app.pem", outside / "app.pub"
        subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
        subprocess.run(
            ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)], check=True, capture_output=True
        )
        sums = {v: runner_tarball(outside / "dl", v) for v in VERSIONS}
        tools = stub_tools(outside / "bin", outside / "spool")
        github = FakeGitHub(pub, [PLANT.format(**tools), CHECK.format(**tools)])
        env = {**os.environ, "PATH": f"{outside / 'bin'}:{os.environ['PATH']}",
               "RUNNER_SHA256": sums[VERSIONS[0]], "RUNNER_APP_KEY_FILE": str(key)}  # fmt: skip
        install = subprocess.run(
            [str(INSTALLER), "--root", str(root), "--url", f"https://github.com/{REPO}", "--api", github.url,
             "--download-base", f"file://{outside / 'dl'}", "--app-id", APP_ID, "--installation-id",
             INSTALLATION_ID, "--job-runner", "direct", "--user", user, "--name", "hft-bench-test",
             "--version", VERSIONS[0]],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert install.returncode == 0, install.stdout + install.stderr
        loop = subprocess.run(
            [str(root / "usr/local/sbin/hft-runner-loop"), "--config", str(root / "etc/hft-runner/loop.conf"),
             "--jobs", "2"],
            env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        yield {"root": root, "user": user, "uid": uid, "github": github, "loop": loop, "env": env,
               "sums": sums, "tools": tools, "outside": outside}  # fmt: skip
    finally:
        subprocess.run(["pkill", "-KILL", "-U", str(uid)], capture_output=True)
        time.sleep(0.2)
        for d in ("/dev/shm", "/tmp", "/var/tmp"):
            subprocess.run(
                ["find", d, "-xdev", "-mindepth", "1", "-user", str(uid), "-delete"], capture_output=True
            )
        for kind in ("-m", "-s", "-q"):  # what a failed run may have left
            for row in subprocess.run(["ipcs", kind], capture_output=True, text=True).stdout.splitlines():
                f = row.split()
                if len(f) > 2 and f[2] in (user, str(uid)) and f[1].isdigit():
                    subprocess.run(["ipcrm", kind, f[1]], capture_output=True)
        if shutil.which("crontab"):
            subprocess.run(["crontab", "-r", "-u", user], capture_output=True)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_two_jobs_each_registered_just_in_time_with_an_app_token(world):
    gh, loop = world["github"], world["loop"]
    assert loop.returncode == 0, loop.stderr
    assert not gh.errors, gh.errors
    assert len(gh.tokens) == 2 and len(gh.jit_requests) == 2, "one token and one JIT registration per job"
    for req in gh.jit_requests:
        assert req["labels"] == ["self-hosted", "linux", "x64", "hft-tuned"] and req["runner_group_id"] == 1
        assert req["work_folder"] == "_work" and req["name"].startswith("hft-bench-test-")
    assert gh.jit_requests[0]["name"] != gh.jit_requests[1]["name"]
    assert "-----BEGIN" not in loop.stdout + loop.stderr and "ghs_test" not in loop.stdout + loop.stderr


def test_every_write_of_the_runner_is_allowed_and_the_hook_runs(world):
    results = world["github"].results
    assert [r["rc"] for r in results] == ["0", "0"], results
    jobs_dir = str(world["root"] / "var/lib/hft-runner/jobs")
    for r in results:
        out = r["output"]
        assert "Permission denied" not in out and "job-started hook: push of" in out, out
        assert r["root"].startswith(jobs_dir + "/") and r["root"].endswith("/runner")
    assert results[0]["root"] != results[1]["root"], "each job in a fresh copy"
    assert [r["disable_update"] for r in results] == ["true", "true"], "no self-update: unchecked code"
    assert "job 1 planted" in results[0]["output"]


def test_the_second_job_finds_nothing_of_the_first(world):
    out = world["github"].results[1]["output"]
    assert "job 2 clean" in out and "LEFT" not in out, out


def test_nothing_of_the_user_is_left_after_the_loop(world):
    uid, user, tools = world["uid"], world["user"], world["tools"]
    assert subprocess.run(["pgrep", "-U", str(uid)], capture_output=True).returncode == 1
    assert user not in subprocess.run(["ipcs", "-s"], capture_output=True, text=True).stdout
    assert not [p for d in ("/dev/shm", "/tmp", "/var/tmp") for p in Path(d).glob(f"hft-planted-{uid}")]
    assert subprocess.run([tools["crontab"], "-l", "-u", user], capture_output=True, text=True).stdout == ""
    assert user not in subprocess.run([tools["atq"]], capture_output=True, text=True).stdout
    assert list((world["root"] / "var/lib/hft-runner/jobs").iterdir()) == [], "per-job folders deleted"


def test_the_pristine_runner_stays_root_owned_and_unwritten(world):
    pristine = world["root"] / "opt/hft-runner/pristine"
    assert os.readlink(pristine / "current") == VERSIONS[0]
    here = pristine / VERSIONS[0]
    for p in [here, *here.rglob("*")]:
        st = p.lstat()
        assert st.st_uid == 0 and not st.st_mode & 0o022, p
    for written in (".runner", ".credentials", ".env", "run-helper.sh", "_diag", "_work"):
        assert not (here / written).exists(), written
    assert not list((pristine / ".download").iterdir()), "no tarball left behind"


def test_the_jobs_env_names_the_root_owned_hook(world):
    env = (world["root"] / "etc/hft-runner/runner.env").read_text().splitlines()
    hook = world["root"] / "usr/local/sbin/hft-job-started-hook.sh"
    assert f"ACTIONS_RUNNER_HOOK_JOB_STARTED={hook}" in env
    st = hook.stat()
    assert st.st_uid == 0 and not st.st_mode & 0o022
    assert (world["root"] / "etc/hft-runner/app-key.pem").stat().st_mode & 0o777 == 0o600


def unit(world) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for line in (world["root"] / "etc/systemd/system/hft-runner-job@.service").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            directives.setdefault(k, []).append(v)
    return directives


def test_the_job_unit_is_sandboxed_and_may_write_only_its_job_folder(world):
    u, jobs = unit(world), f"{world['root']}/var/lib/hft-runner/jobs/%i"
    want = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes", "RemoveIPC": "yes",
            "PrivateIPC": "yes", "ProtectHome": "tmpfs", "RestrictSUIDSGID": "yes",
            "KillMode": "control-group", "CapabilityBoundingSet": "", "User": world["user"],
            "ProtectKernelTunables": "yes", "ProtectControlGroups": "yes"}  # fmt: skip
    for key, value in want.items():
        assert u.get(key) == [value], (key, u.get(key))
    assert u["ReadWritePaths"] == [jobs], "exactly the job's folder (runner copy and home)"
    assert u["WorkingDirectory"] == [f"{jobs}/runner"] and u["Environment"] == [f"HOME={jobs}/home"]
    assert u["ExecStart"] == [f"{jobs}/runner/run.sh"], "the JIT configuration is never an argument"
    assert u["EnvironmentFile"] == [f"{world['root']}/run/hft-runner/%i.env"]


def test_an_update_is_checked_before_it_is_unpacked_then_switched(world):
    root, env, new = world["root"], world["env"], VERSIONS[1]
    pristine = root / "opt/hft-runner/pristine"
    base = ["--root", str(root), "--download-base", f"file://{world['outside'] / 'dl'}", "--update", new]
    bad = subprocess.run([str(INSTALLER), *base, "f" * 64], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "does not match sha256" in bad.stderr, bad.stderr
    assert os.readlink(pristine / "current") == VERSIONS[0] and not list(pristine.glob(f"{new}*"))
    good = subprocess.run(
        [str(INSTALLER), *base, world["sums"][new]], env=env, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr
    assert os.readlink(pristine / "current") == new and (pristine / new / "run.sh").stat().st_uid == 0


def test_a_runner_that_fails_is_logged_and_its_registration_removed(world):
    """Here the stand-in GitHub has no job left: the stand-in listener fails as a real one
    that cannot reach GitHub would; the loop says so, removes the JIT runner and retries. What a
    loop stopped mid-job left is removed when the loop starts."""
    gh, root = world["github"], world["root"]
    (root / "var/lib/hft-runner/jobs/stale-job/runner").mkdir(parents=True)  # a loop stopped mid-job
    loop = subprocess.run(
        [str(root / "usr/local/sbin/hft-runner-loop"), "--config", str(root / "etc/hft-runner/loop.conf"),
         "--jobs", "1"],
        env=world["env"], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert loop.returncode == 1 and "run.sh exited" in loop.stderr, loop.stderr
    assert gh.deleted == [f"/repos/{REPO}/actions/runners/3"], gh.deleted
    assert "removed the registration of runner 3" in loop.stderr
    assert list((root / "var/lib/hft-runner/jobs").iterdir()) == []
    assert subprocess.run(["pgrep", "-U", str(world["uid"])], capture_output=True).returncode == 1
