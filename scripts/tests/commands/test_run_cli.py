"""`hftbench run` / `report` end to end on the fake bin/: files, exit status, bad input."""

from __future__ import annotations

import json
import re

import pytest
from hftbench import cli
from hftbench.results import load_run
from support.hftbench_fakes import NO_TIMEOUT_MS, make_bins, write_config


def run(tmp_path, *args) -> int:
    return cli.main(
        ["run", "--config", str(tmp_path / "s.yaml"), "--bin", str(tmp_path / "bin"), "--quiet", *args]
    )


@pytest.fixture
def fake(tmp_path):
    make_bins(tmp_path, {"rust": "ok", "go": "ok", "hft": "crash"})
    write_config(tmp_path / "s.yaml")
    return tmp_path


def test_a_crashing_client_fails_its_cells_and_the_rest_still_run(fake, capsys):
    out = fake / "run"
    assert run(fake, "--suite", "all", "--out", str(out), "--no-report") == 1
    r = load_run(out)
    assert r.complete and r.suite == "all"
    cells = {(c.scenario, c.client): c for c in r.cells}
    assert set(cells) == {(s, c) for s in ("tiny", "tiny-open") for c in ("rust", "go", "hft")}
    assert cells["tiny", "hft"].reason.startswith("killed by SIGSEGV")
    assert cells["tiny-open", "rust"].ok and cells["tiny-open", "rust"].result.mode == "open"
    assert [s["client"] for s in r.skipped] == ["python", "c", "cpp"]
    assert (out / "server.log").read_text().startswith("hft-server listening on http://127.0.0.1:")
    assert (out / "tiny" / "go.json").is_file() and (out / "tiny-open" / "rust.json").is_file()
    doc = json.loads((out / "results.json").read_text())
    assert doc["schema_version"] == 1 and doc["git"]["commit"] and doc["fingerprint"]["cores"]
    assert "tiny/hft: killed by SIGSEGV" in capsys.readouterr().err


def test_repeats_interleave_clients_and_report_is_written(fake):
    out = fake / "run"
    assert run(fake, "--suite", "t", "--repeat", "2", "--orders", "10", "--out", str(out)) == 0
    r = load_run(out)
    assert [(c.client, c.repeat) for c in r.cells] == [("rust", 1), ("go", 1), ("go", 2), ("rust", 2)]
    assert (out / "tiny" / "go.r2.json").is_file()
    assert r.scenarios["tiny"]["orders"] == 10
    md = (out / "report.md").read_text()
    assert "### tiny" in md and "| rust |" in md and (out / "results.csv").is_file()
    assert (out / "plots" / "percentiles_tiny.png").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suite", "nope"], "unknown suite 'nope'; valid suites: t, all"),
        (
            ["--suite", "t", "--scenarios", "tiny,huge"],
            "unknown scenario 'huge'; valid scenarios: tiny, tiny-open",
        ),
        (["--suite", "t", "--clients", "rust,java"], "unknown client 'java'; valid clients: python, c, cpp"),
        (["--suite", "t", "--clients", "cpp"], "client-cpp missing: run `make build-cpp`"),
        (["--suite", "t", "--orders", "0"], "--orders must be >= 1"),
        (["--suite", "t", "--orders", "5", "--duration", "1"], "--orders and --duration exclude each other"),
        (["--suite", "t", "--rounds", "0"], "--rounds must be >= 1"),
        (["--suite", "t", "--rounds", "2", "--repeat", "2"], "--rounds and --repeat exclude each other"),
    ],
)
def test_bad_names_and_values_exit_2_with_the_valid_choices(fake, capsys, args, message):
    assert run(fake, *args) == 2
    assert message in capsys.readouterr().err


def test_missing_server_names_the_make_target(fake, capsys):
    (fake / "bin" / "hft-server").unlink()
    assert run(fake, "--suite", "t") == 2
    assert "hft-server not found: run `make build-rust`" in capsys.readouterr().err


def test_malformed_config_exits_2_with_file_and_line(fake, capsys):
    (fake / "s.yaml").write_text("schema_version: 1\ntargets: {p50_us: -1}\nscenarios: {}\nsuites: {}\n")
    assert run(fake, "--suite", "t") == 2
    assert f"{fake / 's.yaml'}:2:" in capsys.readouterr().err


def test_report_on_a_folder_without_results_exits_2(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == 2
    assert "no results.json here" in capsys.readouterr().err


def test_a_server_that_dies_is_restarted_and_only_its_cell_fails(tmp_path):
    make_bins(tmp_path, {"rust": "ok", "go": "ok"}, server_args="--die-after 30")
    write_config(tmp_path / "s.yaml")
    out = tmp_path / "run"
    assert run(tmp_path, "--suite", "t", "--repeat", "2", "--out", str(out), "--no-report") == 1
    r = load_run(out)
    # 25 orders per cell: the second cell of each server life kills it at order 30.
    assert [(c.client, c.repeat, c.status) for c in r.cells] == [
        ("rust", 1, "ok"),
        ("go", 1, "failed"),
        ("go", 2, "ok"),
        ("rust", 2, "failed"),
    ]
    assert (out / "server.log").read_text().count("hft-server listening on") == 2


# A load scenario (a share of the capacity client-hft probes) beside a closed-loop one.
LOAD = (
    "  tiny-load: {orders: 20, connections: 1, warmup: 5, capacity_fraction: 0.25, "
    f"timeout_ms: {NO_TIMEOUT_MS}}}\n"
)


def test_rounds_run_the_plan_in_a_run_folder_each_at_one_probed_rate(tmp_path, capsys):
    make_bins(tmp_path, {"hft": "ok"})
    write_config(
        tmp_path / "s.yaml",
        extra_scenarios=LOAD,
        extra_suites="  l: {scenarios: [tiny, tiny-load], clients: [hft]}\n",
    )
    out = tmp_path / "runs" / "rounds"
    assert run(tmp_path, "--suite", "l", "--rounds", "2", "--out", str(out), "--no-floor", "--no-report") == 0
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    named = r"^run_\d{8}T\d{6}Z_(r\d\d)_[0-9a-f]{6}$"  # run_<UTC>_r01_<hex>: a unique run id each
    assert [re.sub(named, r"\1", p.name) for p in folders] == ["r01", "r02"]
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == ["capacity-probe.log"]  # one probe
    runs = [load_run(p) for p in folders]
    for r in runs:
        assert r.complete and [(c.scenario, c.ok) for c in r.cells] == [("tiny", True), ("tiny-load", True)]
    rates = {r.scenarios["tiny-load"]["rate"] for r in runs}
    assert len(rates) == 1 and rates.pop() > 0  # every round at the rate probed before them
    assert all(r.server["url"] != runs[0].server["url"] or r is runs[0] for r in runs)  # a fresh server each
    assert all((p / "server.log").is_file() and not (p / "capacity-probe.log").exists() for p in folders)
    err = capsys.readouterr().err
    assert "round 1 of 2" in err and "round 2 of 2" in err and "probed once" in err


def test_rounds_whose_server_does_not_start_name_the_round_and_keep_the_rounds_before(tmp_path, capsys):
    make_bins(tmp_path, {"rust": "ok", "go": "ok"})
    write_config(tmp_path / "s.yaml")
    server = tmp_path / "bin" / "hft-server"
    real = server.read_text()
    # The first start serves; every later one exits before its ready line (--help and --version,
    # which the harness asks of a build, are not starts).
    once = (
        f'case "$1" in --help|--version) ;; *) [ -e {tmp_path}/started ] && exit 3; '
        f"touch {tmp_path}/started ;; esac; exec "
    )
    server.write_text(real.replace("exec ", once, 1))
    out = tmp_path / "rounds"
    assert run(tmp_path, "--suite", "t", "--rounds", "3", "--out", str(out), "--no-report") == 1
    err = capsys.readouterr().err
    assert re.search(r"round 2 of 3 \(run_\w+_r02_[0-9a-f]{6}\): \S+/bin server: ", err), err
    assert f"the rounds before it are in {out}" in err
    first, second = (load_run(p) for p in sorted(out.iterdir()))
    assert "_r01_" in first.run_id and first.complete and len(first.cells) == 2  # kept, whole
    assert "_r02_" in second.run_id and not second.complete and second.cells == []  # says it did not run
    assert not any("_r03_" in p.name for p in out.iterdir())  # no round after it
