"""What act cannot show about bench.yml (it ignores concurrency and permissions), checked on the
workflow files themselves; test_workflows_act.py runs them."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from support.act_world import ROOT

pytestmark = pytest.mark.ci


def test_workflows_keep_every_push_and_least_privilege():
    """What act cannot show (it ignores concurrency and permissions), checked on the files."""
    wf = yaml.safe_load((ROOT / ".github/workflows/bench.yml").read_text())
    on = wf.get("on", wf.get(True))
    assert "pull_request_target" not in on and wf["permissions"] == {"contents": "read"}
    assert "concurrency" not in wf
    for name, job in wf["jobs"].items():
        labels = job["runs-on"] if isinstance(job["runs-on"], list) else [job["runs-on"]]
        if labels == ["${{ matrix.leg.labels }}"]:  # a leg of the pool: a self-hosted runner
            labels = ["self-hosted"]
        group = (job.get("concurrency") or {}).get("group", "")
        # GitHub keeps one pending run per group: a shared group drops queued main pushes.
        assert name == "pr-bench" or not group, f"{name}: a concurrency group can drop a queued run"
        assert not group or "github.event.pull_request.number" in group
        perms = job.get("permissions", {})
        if "self-hosted" in labels:
            assert all(v == "read" for v in perms.values()), f"{name}: writes on the self-hosted runner"
            guard = r"head\.repo\.full_name == github\.repository|event_name == '(push|workflow_dispatch)'"
            assert re.search(guard, job.get("if", "")), f"{name}: no fork guard"
        for step in job["steps"]:
            uses, run = step.get("uses", ""), step.get("run", "")
            assert not uses or re.search(r"@[0-9a-f]{40}$", uses), f"{name}: {uses} not pinned to a SHA"
            if uses.startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, f"{name}: checkout keeps credentials"
            assert not run or run.startswith("scripts/ci/"), f"{name}: run step is not a scripts/ci call"
            assert "${{" not in run, f"{name}: expression pasted into a shell"
            if "github.token" in json.dumps(step.get("env", {})) + json.dumps(step.get("with", {})):
                # fetch-store: the read token, for a private repository's gh-pages (git only)
                # pr-combine: only its check-run step (the verdict's check run)
                posts = name in ("pr-comment", "report-regression") or (
                    name == "pr-combine" and run.startswith("scripts/ci/check-run ")
                )
                assert run.startswith(("scripts/ci/push-bundle", "scripts/ci/fetch-store")) or posts, (
                    f"{name}: the token reaches a step that does not fetch, push or post"
                )
    assert "github.ref == 'refs/heads/main'" in wf["jobs"]["publish"]["if"]
    # A job that may write to the repository builds and installs nothing: it checks out
    # scripts/ci, downloads the bundle a read-only job built, and push-bundle pushes it.
    for name, job in wf["jobs"].items():
        if "write" not in (job.get("permissions") or {}).values():
            continue
        assert job["permissions"] in (
            {"contents": "write"},
            {"contents": "read", "pull-requests": "write"},
            {"contents": "read", "issues": "write"},
            {"contents": "read", "checks": "write"},
        ), name
        if "checks" in job["permissions"]:  # the verdict's check run: its one step holds the token
            holders = [s["run"] for s in job["steps"] if "github.token" in json.dumps(s.get("env", {}))]
            assert name == "pr-combine" and holders == [
                'scripts/ci/check-run "$RUNNER_TEMP/pr-verdict/verdict.json"'
            ], name
        if job["permissions"] == {"contents": "write"}:
            uses = [s.get("uses", "").split("@")[0] for s in job["steps"]]
            runs = [s["run"] for s in job["steps"] if "run" in s]
            assert uses == ["actions/checkout", "actions/download-artifact", ""], name
            assert job["steps"][0]["with"]["sparse-checkout"] == "scripts/ci", name
            assert len(runs) == 1 and runs[0].startswith("scripts/ci/push-bundle "), name
    # npm never runs an install script: every npm ci / install of the workflows' scripts and deps.
    for path in [*(ROOT / "scripts/ci").iterdir(), ROOT / "scripts/deps.sh", ROOT / "Makefile"]:
        for line in path.read_text().splitlines():
            if re.search(r"\bnpm (ci|install|i)\b", line) and not line.lstrip().startswith("#"):
                assert "--ignore-scripts" in line, f"{path.name}: {line.strip()}"
    # A pull request is judged, and its comment rendered, by the base's harness.
    for name in ("pool", "pr-bench", "pr-combine", "pr-comment"):
        (checkout,) = [
            s for s in wf["jobs"][name]["steps"] if s.get("uses", "").startswith("actions/checkout@")
        ]
        assert checkout["with"]["ref"].startswith("${{ github.event.pull_request.base.sha"), name
    assert "write" not in wf["jobs"]["pool"]["permissions"].values() and "if" not in wf["jobs"]["pool"]
