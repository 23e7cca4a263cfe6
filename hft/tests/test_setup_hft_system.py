"""hft/scripts/setup_hft_system.sh: --check --json matches its schema and the machine,
--dry-run changes nothing, --apply then --revert leaves every knob as it was."""

import fcntl
import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

HFT = Path(__file__).resolve().parents[1]
SCRIPT = HFT / "scripts" / "setup_hft_system.sh"
SCHEMA = json.loads((HFT / "scripts" / "fingerprint.schema.json").read_text())

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
THP_DEFRAG = Path("/sys/kernel/mm/transparent_hugepage/defrag")
SWAPPINESS = Path("/proc/sys/vm/swappiness")
NR_HUGEPAGES = Path("/proc/sys/vm/nr_hugepages")
REAL_KNOBS = [THP, THP_DEFRAG, SWAPPINESS, NR_HUGEPAGES]


@pytest.fixture(autouse=True)
def knobs_lock():
    """Two pytest sessions on one machine must not interleave apply/revert (or read the
    knobs while the other has them applied): each test holds a machine-wide lock."""
    with open("/tmp/hft-bench-tuning-test.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run(*args, env=None, check=True):
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=full_env, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def snapshot():
    return {str(p): p.read_text() for p in REAL_KNOBS if p.exists()}


def writable(path):
    """Writing the current value back is the only sure test (sysfs may be mounted read-only)."""
    if not path.exists() or os.geteuid() != 0:
        return False
    current = bracketed(path) if "[" in path.read_text() else path.read_text().strip()
    try:
        path.write_text(current + "\n")
    except OSError:
        return False
    return True


def bracketed(path):
    text = path.read_text()
    return text[text.index("[") + 1 : text.index("]")]


def test_check_json_is_valid_against_the_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    doc = json.loads(run("--check", "--json").stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def test_check_json_reports_this_machine():
    knobs = json.loads(run("--check", "--json").stdout)["knobs"]
    assert knobs["swappiness"]["value"] == SWAPPINESS.read_text().strip()
    if THP.exists():
        assert knobs["thp"]["value"] == bracketed(THP)
    nodes = len(list(Path("/sys/devices/system/node").glob("node[0-9]*")))
    assert knobs["numa_nodes"]["value"] == str(nodes)
    if not list(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")):
        assert knobs["governor"] == {
            "value": "unavailable",
            "recommended": "performance",
            "status": "unavailable",
            "kind": "runtime",
        }


def test_schema_rejects_a_knob_without_status():
    doc = json.loads(run("--check", "--json").stdout)
    del doc["knobs"]["thp"]["status"]
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))


def test_check_table_has_a_row_per_knob_and_boot_advice():
    out = run("--check").stdout
    for knob in SCHEMA["properties"]["knobs"]["required"]:
        assert any(line.split()[0] == knob for line in out.splitlines() if line.strip()), knob
    assert "isolcpus=" in out and "not applied" in out


def test_dry_run_changes_nothing(tmp_path):
    before = snapshot()
    proc = run("--dry-run", env={"HFT_STATE_DIR": str(tmp_path)})
    assert "would write" in proc.stdout or "already" in proc.stdout
    assert snapshot() == before
    assert not (tmp_path / "tuning.state").exists()


def test_bad_flag_exits_2_with_one_line_naming_it():
    proc = run("--frobnicate", check=False)
    assert proc.returncode == 2
    assert "--frobnicate" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_json_without_check_is_refused():
    proc = run("--apply", "--json", "--dry-run", check=False)
    assert proc.returncode == 2 and "--check --json" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--apply / --revert change kernel knobs: needs root")
def test_apply_then_revert_restores_every_knob(tmp_path):
    if not (writable(SWAPPINESS) and writable(THP)):
        pytest.skip("THP or vm.swappiness is read-only on this machine")
    env = {"HFT_STATE_DIR": str(tmp_path)}
    before = snapshot()
    try:
        run("--apply", "--hugepages", "4", env=env)
        assert bracketed(THP) == "never"
        assert SWAPPINESS.read_text().strip() == "1"
        assert int(NR_HUGEPAGES.read_text()) >= 4
        assert json.loads(run("--check", "--json", env=env).stdout)["saved_state"] is True
        # A second --apply must not overwrite the saved original with the tuned value.
        run("--apply", "--hugepages", "4", env=env)
    finally:
        run("--revert", env=env)
    assert snapshot() == before
    assert not (tmp_path / "tuning.state").exists()


def test_apply_and_revert_on_a_fake_tree_with_a_governor(tmp_path):
    """This VM has no cpufreq: a fake sysfs tree shows the governor is saved and restored."""
    root = tmp_path / "root"
    gov = root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    swp = root / "proc/sys/vm/swappiness"
    for path, text in [(gov, "powersave\n"), (swp, "60\n"), (root / "proc/cmdline", "quiet\n")]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {"HFT_SYSFS_ROOT": str(root), "HFT_STATE_DIR": str(tmp_path / "state")}
    out = run("--apply", env=env).stdout
    assert gov.read_text() == "performance\n" and swp.read_text() == "1\n"
    assert "thp: unavailable" in out
    knobs = json.loads(run("--check", "--json", env=env).stdout)["knobs"]
    assert knobs["governor"]["status"] == "tuned" and knobs["thp"]["status"] == "unavailable"
    run("--revert", env=env)
    assert gov.read_text() == "powersave\n" and swp.read_text() == "60\n"
