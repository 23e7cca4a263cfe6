"""The repository's policy files: a LICENSE matching Cargo's `license`, a SECURITY.md that
says how to report and what is in scope, Dependabot on every manifest git tracks, a CODEOWNERS
that owns the harness, the build files and hft/, and docs that name the write jobs bench.yml
really has."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[3]
# manifest file name -> the Dependabot ecosystem that updates it
ECOSYSTEM = {
    "Cargo.toml": "cargo",
    "go.mod": "gomod",
    "package.json": "npm",
    "requirements.txt": "pip",
    "Dockerfile": "docker",
}


def test_the_license_file_is_the_one_cargo_names():
    license_id = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["license"]
    text = (ROOT / "LICENSE").read_text()
    assert license_id == "MIT" and text.startswith("MIT License\n\nCopyright (c) 2026 the hft-bench authors")
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_security_md_says_how_to_report_and_names_the_gate_the_runner_and_the_server():
    text = (ROOT / "SECURITY.md").read_text()
    assert "Report a vulnerability" in text and "never in a public issue" in text
    for part in ("**The gate**", "**The self-hosted runner**", "**The server**", "## Out of scope"):
        assert part in text, part
    assert "admin token" not in text and "GitHub App's private key" in text, (
        "the runner registers with an App key"
    )


def test_dependabot_covers_every_tracked_manifest_and_the_actions():
    updates = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())["updates"]
    covered = {(u["package-ecosystem"], u["directory"].rstrip("/") or "/") for u in updates}
    assert ("github-actions", "/") in covered
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    for path in map(Path, tracked.stdout.splitlines()):
        if path.name in ECOSYSTEM and "fuzz" not in path.parts:
            folder = "/" if path.parent == Path(".") else f"/{path.parent}"
            # a workspace member's Cargo.toml is updated through the workspace root's lock file
            if path.name == "Cargo.toml" and folder != "/":
                folder = "/"
            assert (ECOSYSTEM[path.name], folder) in covered, f"{path}: no Dependabot entry"
    assert all(u.get("cooldown", {}).get("default-days", 0) >= 7 for u in updates)


# Paths a pull request must not change without the owners: the harness, the build files (they
# run while the head is built) and the host side. A file under server/src is the code under
# review and needs no owner.
OWNED = [
    *(
        ".github/workflows/bench.yml",
        ".github/CODEOWNERS",
        "bench-config/gates.yaml",
        "bench-config/pool.yaml",
    ),
    *("scripts/hftbench/cli.py", "scripts/ci/hftbench", "scripts/deps.sh", "Makefile", "requirements.txt"),
    "requirements-dev.txt",
    *("clients/hft/src/main.c", "Cargo.toml", "Cargo.lock", "server/Cargo.toml", "clients/rust/Cargo.toml"),
    *(".cargo/config.toml", "server/.cargo/config.toml", "rust-toolchain", "rust-toolchain.toml"),
    *("server/rust-toolchain.toml", "clients/rust/build.rs", "server/build.rs", "server/src/gen/build.rs"),
    *("hft/runner/job-started-hook.sh", "hft/runner/provision-host", "hft/scripts/setup_hft_system.sh"),
]
NOT_OWNED = ["server/src/lib.rs", "server/src/routes.rs", "docs/adopting.md", "README.md"]


def code_owners(tmp_path: Path, paths: list[str]) -> dict[str, list[str]]:
    """{path: owners of the last CODEOWNERS rule matching it} (gitignore matching, as GitHub
    uses: git check-ignore in an empty repository, the patterns as its excludes file)."""
    rules = [line.split() for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines()]
    rules = [r for r in rules if r and not r[0].startswith("#")]
    (tmp_path / "patterns").write_text("".join(f"{r[0]}\n" for r in rules))
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    excludes = f"core.excludesFile={tmp_path / 'patterns'}"
    out = subprocess.run(
        ["git", "-c", excludes, "check-ignore", "--no-index", "-v", "-n", *paths],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
    ).stdout
    owners = {}
    for line in out.splitlines():
        where, path = line.split("\t", 1)
        number = where.split(":")[1]
        owners[path] = rules[int(number) - 1][1:] if number else []
    return owners


def test_codeowners_is_real_and_owns_the_harness_the_build_files_and_hft(tmp_path):
    assert not (ROOT / ".github" / "CODEOWNERS.example").exists(), "GitHub reads only CODEOWNERS"
    owners = code_owners(tmp_path, OWNED + NOT_OWNED)
    for path in OWNED:
        assert owners[path] and all(o.startswith("@") for o in owners[path]), f"{path}: no owner"
    for path in NOT_OWNED:
        assert owners[path] == [], f"{path}: owned, but it is not the harness"
    adopting = (ROOT / "docs" / "adopting.md").read_text()
    assert ".github/CODEOWNERS" in adopting and "codeowners/errors" in adopting


def test_the_runner_readme_names_the_jobs_that_hold_a_write_token():
    """hft/runner/README.md says which jobs of bench.yml hold `contents: write`: exactly those."""
    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "bench.yml").read_text())["jobs"]
    writers = sorted(
        name for name, job in jobs.items() if (job.get("permissions") or {}).get("contents") == "write"
    )
    assert writers == ["micro-push", "publish-again-push", "publish-push"], writers
    readme = " ".join((ROOT / "hft" / "runner" / "README.md").read_text().split())
    named = (
        "only " + ", ".join(f"`{w}`" for w in writers[:-1]) + f" and `{writers[-1]}` get `contents: write`"
    )
    assert named in readme, named
