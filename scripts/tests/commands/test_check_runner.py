"""check-runner's advice from a fingerprint (pure), and the command itself."""

from __future__ import annotations

import json

from hftbench import cli
from hftbench.commands.check_runner import warnings_for

TUNED = {
    "cores": 16,
    "load_avg": [0.1, 0.1, 0.1],
    "virtualization": None,
    "tuning": {
        "source": "hft/scripts/setup_hft_system.sh",
        "knobs": {"thp": {"value": "never", "recommended": "never", "status": "tuned", "kind": "runtime"}},
    },
}


def test_a_tuned_host_has_no_warnings():
    assert warnings_for(TUNED) == []


def test_each_problem_is_one_warning_with_its_fix():
    fp = json.loads(json.dumps(TUNED))
    fp.update(cores=2, load_avg=[1.5, 1, 1], virtualization="kvm")
    fp["tuning"]["knobs"]["isolcpus"] = {
        "value": "none",
        "recommended": "1",
        "status": "not tuned",
        "kind": "boot",
    }
    fp["tuning"]["knobs"]["thp"]["status"] = "not tuned"
    warns = warnings_for(fp)
    assert len(warns) == 5
    assert any(w.startswith("only 2 cores") for w in warns)
    assert any(w.startswith("load average 1.5 on 2 cores") for w in warns)
    assert "isolcpus = none (recommended 1; kernel command line)" in warns
    assert "thp = never (recommended never; setup_hft_system.sh --apply)" in warns


def test_without_the_tuning_script_it_says_so():
    fp = {
        **TUNED,
        "tuning": {"source": "direct (/sys, /proc): hft/scripts/setup_hft_system.sh missing or failed"},
    }
    assert warnings_for(fp) == ["hft/scripts/setup_hft_system.sh not available: tuning only partly checked"]


def test_the_command_prints_json_and_strict_fails_on_this_untuned_vm(capsys):
    assert cli.main(["check-runner", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"fingerprint", "git", "tools", "warnings"} <= set(doc)
    assert doc["fingerprint"]["cores"] >= 1 and "knobs" in doc["fingerprint"]["tuning"]
    strict = cli.main(["check-runner", "--strict"])
    assert strict == (1 if doc["warnings"] else 0)


def test_a_failed_tuning_unit_fails_check_runner_loudly(monkeypatch, capsys):
    """The runner starts without its tuning (Wants=, not Requires=): the first job's
    check-runner --strict is where the failure must show, with the way to fix it."""
    from hftbench.commands import check_runner

    assert check_runner.tuning_unit_warnings("active") == [] and check_runner.tuning_unit_warnings(None) == []
    monkeypatch.setattr(check_runner, "warnings_for", lambda fp: [])
    monkeypatch.setattr(check_runner, "placement_warnings", lambda iso, placement: [])
    monkeypatch.setattr(check_runner, "_tuning_unit_state", lambda: "failed")
    assert cli.main(["check-runner", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "hft-tuning.service failed at boot" in out and "journalctl -u hft-tuning.service" in out
