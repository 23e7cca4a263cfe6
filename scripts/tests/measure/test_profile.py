"""The differential profile: self time from folded stacks (pure, exact), and `hftbench ab` on
two commits whose head busy-waits in every order: the SVG is written and the functions the
wait runs in lead the added self time, from rounds that never enter the statistics."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hftbench import cli
from hftbench.measure import profile, sandbox
from hftbench.profile_record import ProfileRecord, TopFunction
from hftbench.publish import profile_text
from support.hftbench_fakes import ab_argv

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "bin" / "hft-server"
CLIENT = ROOT / "bin" / "client-hft"
BUILD = "mkdir -p bin && install -m 755 server.sh bin/hft-server"

FOLDED_BASE = "main;serve;parse 30\nmain;serve;match 60\nmain;idle 10\n"
FOLDED_HEAD = "main;serve;parse 30\nmain;serve;match 60\nmain;serve;checksum 100\nmain;idle 10\n"


def test_self_time_is_the_leaf_frame():
    assert profile.self_samples(FOLDED_HEAD) == Counter(
        {"checksum": 100, "match": 60, "parse": 30, "idle": 10}
    )
    assert profile.self_samples("garbage line\n\nmain;x notanumber\n") == Counter()


def test_top_added_ranks_by_the_growth_of_each_sides_share():
    top = profile.top_added(profile.self_samples(FOLDED_BASE), profile.self_samples(FOLDED_HEAD))
    # base: parse 30 %, match 60 %, idle 10 %; head (200 samples): checksum 50 %, shares of the rest halve
    assert top == [TopFunction("checksum", base_self_pct=0.0, head_self_pct=50.0, added_self_pct=50.0)]


def test_the_profile_speaks_in_the_words_of_the_command_that_runs_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(profile, "unavailable", lambda root=None: "perf not found")
    said = []
    taken = profile.profile_sides(None, {}, tmp_path, "t", {}, say=said.append)
    assert taken == ProfileRecord(skipped="perf not found") and said == ["no profile: perf not found"]
    assert capsys.readouterr().err == ""  # the caller's words only (ab's: "hftbench ab: …")
    profile.profile_sides(None, {}, tmp_path, "t", {})
    assert capsys.readouterr().err == "hftbench profile: no profile: perf not found\n"


def test_the_verdict_text_shows_the_graph_and_the_table():
    doc = {
        "svg": "profile/diff.svg",
        "top": [
            {
                "function": "hft_server::routes::order_checksum",
                "base_self_pct": 0.0,
                "head_self_pct": 41.5,
                "added_self_pct": 41.5,
            }
        ],
    }
    text = "\n".join(profile_text.profile_markdown(ProfileRecord.from_json(doc), "https://ci/run/1"))
    assert "`profile/diff.svg` in [the run's artifact](https://ci/run/1)" in text
    assert "| `hft_server::routes::order_checksum` | 0.0% | 41.5% | +41.5 pt |" in text


needs_sandbox = pytest.mark.skipif(sandbox.probe() is not None, reason=f"no sandbox here: {sandbox.probe()}")


@needs_sandbox
def test_the_profiles_parsers_see_only_the_profile_and_the_served_binaries(tmp_path):
    """perf script and inferno parse the head's binary and stacks: in the sandbox they read
    the profile's folder and the served binaries, nothing else of the output, and send
    nothing; unsandboxed (an unsandboxed head) the same command reads it all."""
    out = tmp_path / "out"
    (out / "profile").mkdir(parents=True)
    (out / "head" / "sandboxed").mkdir(parents=True)
    (out / "profile" / "base.folded").write_text("main;work 3\n")
    (out / "head" / "sandboxed" / "hft-server").write_text("elf")
    (out / "verdict.json").write_text("base's verdict")
    parsing = profile.Parsing(True, out, (out / "profile", out / "head" / "sandboxed"))

    def reads(parsing: profile.Parsing, path: Path) -> bool:
        return subprocess.run(parsing.command(["cat", str(path)]), capture_output=True).returncode == 0

    assert reads(parsing, out / "profile" / "base.folded")
    assert reads(parsing, out / "head" / "sandboxed" / "hft-server")
    assert not reads(parsing, out / "verdict.json")
    assert reads(profile.Parsing(False, out, ()), out / "verdict.json")
    touch = parsing.command(["sh", "-c", f"echo x > {out / 'profile' / 'forged.svg'}"])
    assert subprocess.run(touch, capture_output=True).returncode != 0
    assert not (out / "profile" / "forged.svg").exists()


# asked once: perf's probe takes a second, and every pytest process collects this module
NO_PROFILE = profile.unavailable(ROOT)
needs_perf = pytest.mark.skipif(
    NO_PROFILE is not None, reason=f"needs perf + inferno (make deps): {NO_PROFILE}"
)


@pytest.mark.usefixtures("real_binaries")
@needs_perf
def test_a_regression_comes_with_a_differential_flame_graph(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    for name, extra in (("base", ""), ("head: 40 µs more work in every order", "--inject-delay-us 40 ")):
        (repo / "server.sh").write_text(f'#!/bin/sh\nexec {SERVER} {extra}"$@"\n')
        subprocess.run(["git", "-C", str(repo), "add", "server.sh"], check=True)
        who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
        subprocess.run(["git", "-C", str(repo), *who, "commit", "-qm", name], check=True)
    out = tmp_path / "out"
    code = cli.main(
        ab_argv(
            repo,
            out,
            orders=3000,
            rounds=8,
            extra=("--build-cmd", BUILD, "--quiet"),
        )
    )
    assert code == 1
    verdict = json.loads((out / "verdict.json").read_text())
    prof = verdict["profile"]
    assert "skipped" not in prof, prof
    svg = (out / prof["svg"]).read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and "flame" in svg.lower()
    # The busy-wait is inlined into the order handler and reads the clock: those frames gain
    # the added work's self time, far ahead of anything else. (Their share of the whole
    # profile is the host's business: the server's other work and the start-up weigh in.)
    spin_frames = {
        "__vdso_clock_gettime",
        "__GI___clock_gettime",
        "<F as axum::handler::Handler<(M,T1,T2),S>>::call::{{closure}}",
    }
    top = prof["top"]
    assert top[0]["function"] in spin_frames, top
    spin = sum(r["added_self_pct"] for r in top if r["function"] in spin_frames)
    rest = sum(r["added_self_pct"] for r in top if r["function"] not in spin_frames)
    assert spin > 2 * rest, top
    # The profiled rounds are not among the counted ones.
    assert verdict["base"]["runs"] == verdict["head"]["runs"] == 8
    counted = [json.loads(p.read_text()) for p in out.glob("*/run_*/results.json")]
    profiled = [json.loads(p.read_text()) for p in out.glob("profile/*/run/results.json")]
    assert len(counted) == 16 and len(profiled) == 2
    assert all("/profile/" not in r["server"]["binary"] for r in counted)  # the plain binary, no perf
    assert all("/profile/" in r["server"]["binary"] for r in profiled)
    assert prof["round_p50_us"]["base"]["counted_median"] is not None
    summary = (out / "summary.md").read_text()
    assert "Where the time went" in summary and "profile/diff.svg" in summary
