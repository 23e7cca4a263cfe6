"""The world the act tests run in (test_workflows_act.py): the bare origin, a development
clone that commits and pushes, the fake REST API, and `act` run once per event with the
stand-ins of scripts/tests/act mapped in; a run's jobs, outputs and summaries read from act's
JSON log."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fakes"))
from github_api import FakeGitHub  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
ACT = ROOT / ".deps" / "bin" / "act"
STANDINS = ROOT / "scripts" / "tests" / "act"
TOKEN = "act-test-token"
BOT = "github-actions[bot]"
REPO = "acme/hft-bench"
TEAM = "@acme/perf-team"
GATES = (Path(__file__).parents[1] / "fixtures" / "ci-gates.yaml").read_text()
PINNED = {  # the SHAs the workflows pin -> the stand-in folder
    "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02": "upload-artifact",
    "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093": "download-artifact",
    "actions/setup-go@d35c59abb061a4a6fb18e82ac0862c26744d6ab5": "setup-go",
    "benchmark-action/github-action-benchmark@d48d326b4ca9ba73ca0cd0d59f108f9e02a381c7": (
        "github-action-benchmark"
    ),
    # Only a checkout with a ref (pr-bench's base) comes here; act copies the others itself.
    "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683": "checkout",
}

# The act runs that measure also take the real binaries, through act_world (ci/conftest.py).
needs = pytest.mark.skipif(
    not (ROOT / "gh-pages" / "node_modules" / "uplot").is_dir() or not os.access(ACT, os.X_OK),
    reason="needs gh-pages/node_modules and .deps/bin/act (make deps)",
)


def _descendants(root: int) -> list[int]:
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def _leg_ab(pid: int, leg: str) -> Path | None:
    """The folder of the A/B (OUT/ab) when `pid` is `hftbench pr-leg` of the pool leg `leg`
    (it runs ab in its own process)."""
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return None
    out = [e[len(b"OUT=") :] for e in env if e.startswith(b"OUT=")]
    if f"POOL_LEG={leg}".encode() not in env or "pr-leg" not in argv or not out:
        return None
    return Path(out[0].decode()) / "ab"


def cut_when_measuring(proc: subprocess.Popen, leg: str, rounds: int) -> None:
    """SIGTERM the leg's `hftbench pr-leg` (a descendant of this act run) once its A/B's head
    side has `rounds` run folders: a job cancelled or timed out mid-run gets the same signal.
    Python drops an exception its handler raises inside an at-fork hook (logging's lock, as a
    round starts its processes): a signal that lands there is sent again when a further round
    shows it was lost."""
    while proc.poll() is None:
        for pid in _descendants(proc.pid):
            out = _leg_ab(pid, leg)
            if out is not None and len(list((out / "head").glob("run_*"))) >= rounds:
                _terminate(proc, pid, out / "head")
                return
        time.sleep(0.05)
    raise AssertionError(f"act ended before leg {leg} measured {rounds} rounds")


def _terminate(proc: subprocess.Popen, pid: int, head: Path) -> None:
    """SIGTERM `pid`, again each time its head side starts another round, until it ends."""
    os.kill(pid, signal.SIGTERM)
    seen = len(list(head.glob("run_*")))
    while proc.poll() is None and Path(f"/proc/{pid}").exists():
        now = len(list(head.glob("run_*")))
        if now > seen:  # it went on measuring: the signal was lost
            seen = now
            os.kill(pid, signal.SIGTERM)
        time.sleep(0.05)


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


# The rounds of an act run's A/B (ab's --repeats and --max-repeats) and of the pool file it
# commits: the fixture gates' min_repeats (fixtures/ci-gates.yaml), for the A/As.
ACT_ROUNDS = 4
# The runs whose head is 30 µs slower per order, and the recovery from it. A duet's round t has
# k - 2 degrees of freedom: at 4 rounds the head's x1.5 (this VM beside make test's parallel pass,
# a core busy) read p 0.0004-0.007 against alpha 0.01, once inconclusive; at 6, p <= 3e-4
# (docs/measurements.md, 2026-11-30). The rounds come from the base's pool file, which a head
# cannot change, so the commit before the slowed head carries pool_yaml(SLOWED_ROUNDS).
SLOWED_ROUNDS = 6


def pool_yaml(rounds: int = ACT_ROUNDS, text: str | None = None) -> str:
    """A pool file (the product's by default) whose `rounds` are the act runs' (act's `rounds`,
    AB_ARGS): combine holds every leg's rounds and looks to the pool's."""
    text = text if text is not None else (ROOT / "bench-config" / "pool.yaml").read_text()
    return text + f"rounds: {{repeats: {rounds}, max_repeats: {rounds}}}\n"


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class StartCounter:
    """How many times each side's server has started serving, over a Unix socket: ab runs both
    sides' servers in its sandbox, where they can write nothing and have no network but the
    socket the harness hands in (measure/sandbox.py), and a socket file on the read-only
    filesystem still connects. GET /<side> answers that side's count so far (0 at first) and
    adds one."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        lock, counts = threading.Lock(), self.counts

        class Count(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                with lock:
                    n = counts.get(self.path.strip("/"), 0)
                    counts[self.path.strip("/")] = n + 1
                body = str(n).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.dir = Path(tempfile.mkdtemp(prefix="act-starts-"))  # short: a socket path has 108 bytes
        self.path = self.dir / "counter.sock"
        self.server = _UnixHTTPServer(str(self.path), Count)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StartCounter:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)


def alternating_server(counter: StartCounter, side: str, slow_pair: int, delay_us: int) -> str:
    """server.sh of a side slowed by delay_us in every other pair of rounds (pairs 0, 2, … when
    slow_pair is 0; 1, 3, … when 1), its starts counted by `counter`. A duet's head takes each
    slot once in a pair of rounds (rig.py), so with base slowed in one pair and head in the next
    every slot sees both ways, and the rounds' log ratios cancel out of the estimate but not out
    of its spread: the verdict is inconclusive, whatever the draw, never slower, faster or beyond
    the threshold. Only a serving start counts (--listen-fd, or --addr), not --version."""
    curl, server = shutil.which("curl") or "curl", ROOT / "bin" / "hft-server"
    return (
        "#!/bin/sh\n"
        'case " $* " in *" --listen-fd "*|*" --addr "*)\n'
        f"  n=$({curl} -fsS --max-time 5 --unix-socket {counter.path} http://counter/{side}) || n=-2\n"
        f"  if [ $(( n / 2 % 2 )) -eq {slow_pair} ]; then\n"
        f'    exec {server} --inject-delay-us {delay_us} "$@"\n'
        "  fi ;;\n"
        "esac\n"
        f'exec {server} "$@"\n'
    )


class World:
    """The bare origin, a development clone that commits and pushes, the fake API."""

    def __init__(self, tmp: Path, api: FakeGitHub):
        self.tmp, self.api = tmp, api
        self.origin, self.dev = tmp / "origin.git", tmp / "dev"
        self.runs: dict[str, dict] = {}
        subprocess.run(["git", "init", "-q", "--bare", str(self.origin)], check=True)
        subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(self.dev)], check=True)
        diff = subprocess.run(
            ["git", "-C", str(ROOT), "diff", "HEAD", "--binary"], capture_output=True
        ).stdout
        if diff:  # uncommitted edits of this checkout are what is tested
            subprocess.run(["git", "-C", str(self.dev), "apply", "--index", "-"], input=diff, check=True)
        for f in git(ROOT, "ls-files", "--others", "--exclude-standard").splitlines():
            (self.dev / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, self.dev / f)
        git(self.dev, "checkout", "-q", "-B", "main")
        git(self.dev, "remote", "set-url", "origin", str(self.origin))
        # The gate of every job is the checked-out tree's bench-config/gates.yaml (on a pull
        # request: the base's), here the product's with thresholds for tiny rounds; committed
        # with the edits under test, so a PR's base has them too.
        (self.dev / "bench-config" / "gates.yaml").write_text(GATES)
        (self.dev / "bench-config" / "pool.yaml").write_text(pool_yaml())
        self._server(0)
        git(self.dev, "add", "-A")
        git(
            self.dev, "-c", "user.name=dev", "-c", "user.email=dev@example.com", "commit", "-qm", "test world"
        )
        build = tmp / "build-server"  # ab runs it in each side's worktree; a commit's build.sh
        # (none but a hostile head's) runs first, as cargo runs a commit's build.rs
        build.write_text(
            "#!/bin/sh\n[ ! -f build.sh ] || sh build.sh\ninstall -D -m 755 server.sh bin/hft-server\n"
        )
        build.chmod(0o755)

    def commit(self, message: str, delay_us: int = 0, branch: str = "main", files: dict | None = None) -> str:
        """Commit server.sh (the server, slowed by delay_us) and `files` (path -> text) on branch."""
        git(self.dev, "checkout", "-q", "-B", branch) if branch == "main" else None
        self._server(delay_us)
        for path, text in (files or {}).items():
            (self.dev / path).write_text(text)
        git(self.dev, "add", "-A")
        git(
            self.dev,
            "-c",
            "user.name=dev",
            "-c",
            "user.email=dev@example.com",
            "commit",
            "--allow-empty",
            "-qm",
            message,
        )
        git(self.dev, "push", "-q", "-f", "origin", f"HEAD:refs/heads/{branch}")
        return git(self.dev, "rev-parse", "HEAD")

    def _server(self, delay_us: int) -> None:
        """server.sh: the real bin/hft-server, slowed by delay_us on every order."""
        extra = f"--inject-delay-us {delay_us} " if delay_us else ""
        (self.dev / "server.sh").write_text(f'#!/bin/sh\nexec {ROOT / "bin" / "hft-server"} {extra}"$@"\n')

    def act(
        self,
        name: str,
        event: str,
        payload: dict,
        sha: str,
        ref: str,
        *,
        workflow="bench.yml",
        extra=(),
        background=False,
        cut_leg: str | None = None,
        rounds: int = ACT_ROUNDS,
        micro: str = "go",
    ):
        """act EVENT on a fresh clone checked out at sha (act copies it for actions/checkout);
        `cut_leg`: SIGTERM that pool leg's `hftbench ab` once it has measured 3 rounds;
        `rounds`: the A/B's rounds (ab's --repeats and --max-repeats); `micro`: the repository
        variable MICRO_SUITES (a push's microbenchmarks; "none" skips their jobs)."""
        run = self.tmp / name
        work = run / "repo"
        subprocess.run(["git", "clone", "-q", "--shared", str(self.dev), str(work)], check=True)
        branch = ref.removeprefix("refs/heads/")
        git(work, "checkout", "-q", "-B", branch if ref.startswith("refs/heads/") else "detached", sha)
        git(work, "remote", "set-url", "origin", str(self.origin))
        git(work, "remote", "add", "github", f"https://github.com/{REPO}")  # act reads the repo name here
        (run / "artifacts").mkdir(parents=True)
        (run / "event.json").write_text(
            json.dumps({"ref": ref, "repository": {"full_name": REPO}, **payload})
        )
        env = {
            "HFT_CI_PREBUILT": str(ROOT),
            "ALLOW_UNTUNED": "true",
            "ACT_ARTIFACTS": str(run / "artifacts"),
            "GITHUB_API_URL": self.api.url,
            "SUITE": "pr",
            "REPORT_SUITE": "",
            "ROUNDS": "2",
            "ACT_STANDINS": str(STANDINS),
            "ACT_REPO": str(work),
            # micro-bench's go benchmarks 0.1 s each, not 1 s: the chart needs a result, not
            # its precision, and the job runs beside the next push's measured jobs
            "GOFLAGS": "-benchtime=100ms",
            "RUN_ARGS": "--scenarios latency-1c --clients hft --orders 3000 --warmup 300",
            "AB_ARGS": f"--scenarios latency-1c --clients hft --orders 3000 --repeats {rounds} "
            f"--max-repeats {rounds} "
            f"--build-cmd {self.tmp / 'build-server'}",
        }
        cmd = [
            str(ACT),
            event,
            "-W",
            f".github/workflows/{workflow}",
            "-e",
            str(run / "event.json"),
            "--json",
            "-P",
            "self-hosted=-self-hosted",
            "-P",
            "ubuntu-latest=-self-hosted",
            "--remote-name",
            "github",
            "--action-cache-path",
            str(run / "cache"),
            "--action-offline-mode",
            "-s",
            f"GITHUB_TOKEN={TOKEN}",
            *[a for k, v in PINNED.items() for a in ("--local-repository", f"{k}={STANDINS / v}")],
            *[a for k, v in env.items() for a in ("--env", f"{k}={v}")],
            "--var",
            f"MICRO_SUITES={micro}",
            *extra,
        ]
        with open(run / "act.log", "w") as log:
            proc = subprocess.Popen(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        if background:
            return lambda: self._finish(name, proc, run)
        if cut_leg:
            cut_when_measuring(proc, cut_leg, rounds=3)
        return self._finish(name, proc, run)

    def _finish(self, name: str, proc: subprocess.Popen, run: Path) -> dict:
        code = proc.wait(timeout=600)
        jobs, outputs, summaries, lines = {}, {}, {}, []
        for line in (run / "act.log").read_text().splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                lines.append(line)
                continue
            lines.append(doc.get("msg", ""))
            job = doc.get("jobID")
            if "jobResult" in doc:
                jobs[job] = doc["jobResult"]
            elif doc.get("command") == "set-output":
                outputs.setdefault(job, {})[doc["name"]] = doc["arg"]
            elif doc.get("command") == "summary":
                summaries[job] = summaries.get(job, "") + doc["content"]
        result = {
            "exit": code,
            "jobs": jobs,
            "outputs": outputs,
            "summaries": summaries,
            "log": "\n".join(lines)[-6000:],
        }
        self.runs[name] = result
        return result

    def pages(self, *args: str) -> str:
        return git(self.origin, *args)

    def store_commits(self, suite: str = "pr") -> list[str]:
        shas = []
        for f in self.pages("ls-tree", "-r", "--name-only", "gh-pages", f"data/shards/{suite}").split():
            shas += [r["commit"] for r in json.loads(self.pages("show", f"gh-pages:{f}"))["runs"]]
        return shas
