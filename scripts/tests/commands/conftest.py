"""Fixtures of the commands' tests: what costs a real measurement is made once per session and
read by every module that needs it."""

from __future__ import annotations

import subprocess

import pytest
from support.combine_world import B_PLACEMENT, TWO, make_leg, make_repo


@pytest.fixture(scope="session")
def pool_legs(real_binaries, tmp_path_factory):
    """Real legs a and b of a pool (combine_world), measured once for test_combine.py,
    test_combine_forged.py and test_ab.py (leg a's plain `hftbench ab` runs): {"aa", "slow":
    legs folder} (an A/A, and a head 30 µs slower per order), "pool" (TWO), "repo" and the
    commits "base" (HEAD~1) and "head" (HEAD). Leg b is a slower machine: its server on CPU 0
    and every order 10 µs slower on both sides."""
    tmp = tmp_path_factory.mktemp("pool")
    repo = make_repo(tmp / "repo")
    (tmp / "pool.yaml").write_text(TWO)
    sha = {
        ref: subprocess.run(
            ["git", "-C", str(repo), "rev-parse", ref], check=True, capture_output=True, text=True
        ).stdout.strip()
        for ref in ("HEAD~1", "HEAD")
    }
    found = {"pool": tmp / "pool.yaml", "repo": repo, "base": sha["HEAD~1"], "head": sha["HEAD"]}
    for case, head in (("aa", "HEAD~1"), ("slow", "HEAD")):
        found[case] = tmp / case
        make_leg(repo, found[case], "a", head, env={})
        # Leg b takes no profile: combine carries the first leg's (test_combine asserts it), and
        # one more costs this session about 15 s (two perf rounds, perf script, inferno).
        make_leg(
            repo,
            found[case],
            "b",
            head,
            env=B_PLACEMENT,
            flags=("--server-flags", "--inject-delay-us 10", "--no-profile"),
        )
    return found
