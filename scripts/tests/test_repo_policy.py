"""The repository's policy files: a LICENSE matching Cargo's `license`, a SECURITY.md that
says how to report and what is in scope, and Dependabot on every manifest git tracks."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.ci

ROOT = Path(__file__).resolve().parents[2]
# manifest file name -> the Dependabot ecosystem that updates it
ECOSYSTEM = {"Cargo.toml": "cargo", "go.mod": "gomod", "package.json": "npm", "requirements.txt": "pip"}


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
