"""One cell against the fake server: every way a client can fail becomes a reason, not a crash."""

from __future__ import annotations

import json

import pytest
from hftbench import config
from hftbench.measure.cell import CellSetup, default_timeout_s, result_name, run_cell, why_not_clean
from hftbench.measure.server import Server
from support.hftbench_fakes import make_bins, write_config

BEHAVIOURS = {"rust": "ok", "go": "crash", "c": "hang", "cpp": "invalid", "python": "exit2", "hft": "errors"}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cell")
    bins = make_bins(tmp, BEHAVIOURS)
    cfg = config.load(write_config(tmp / "scenarios.yaml"))
    with Server(bins / "hft-server", tmp / "run" / "server.log") as server:
        yield server, bins, tmp / "run", cfg


def test_a_clean_run_is_ok_and_matches_the_server_count(setup):
    server, bins, run_dir, cfg = setup
    cell = run_cell(CellSetup(bins, run_dir), server, cfg.scenarios["tiny"], "rust")
    assert (cell.status, cell.reason, cell.exit_code) == ("ok", None, 0)
    assert cell.server_orders == 25  # 5 warm-up + 20 measured
    assert cell.file == "tiny/rust.json"
    assert json.loads((run_dir / "tiny" / "rust.json").read_text())["ok"] == 20


@pytest.mark.parametrize(
    ("client", "reason"),
    [
        ("go", "killed by SIGSEGV: about to crash"),
        ("cpp", "result does not match result.schema.json: $.latency_us: 'fast' is not of type 'object'"),
        ("python", "exit 2: client-python: cannot connect to"),
        ("hft", "2 of 20 orders failed (timeout 2)"),
    ],
)
def test_failures_carry_the_reason(setup, client, reason):
    server, bins, run_dir, cfg = setup
    cell = run_cell(CellSetup(bins, run_dir), server, cfg.scenarios["tiny"], client)
    assert cell.status == "failed"
    assert cell.reason.startswith(reason), cell.reason


def test_a_hung_client_is_killed_at_its_timeout(setup):
    server, bins, run_dir, cfg = setup
    cell = run_cell(CellSetup(bins, run_dir, timeout_s=1), server, cfg.scenarios["tiny"], "c")
    assert cell.status == "failed" and cell.reason == "timeout: no exit within 1 s (--timeout); killed"


def test_a_missing_binary_names_its_make_target(setup, tmp_path):
    server, _, run_dir, cfg = setup
    cell = run_cell(CellSetup(tmp_path, run_dir), server, cfg.scenarios["tiny"], "go")
    assert cell.status == "failed"
    assert cell.reason.endswith("build it with `make build-go`")


def test_orders_the_server_never_saw_are_lost(tmp_path):
    bins = make_bins(tmp_path, {"rust": "ok"}, server_args="--lose 3")
    cfg = config.load(write_config(tmp_path / "scenarios.yaml"))
    with Server(bins / "hft-server", tmp_path / "run" / "server.log") as server:
        cell = run_cell(CellSetup(bins, tmp_path / "run"), server, cfg.scenarios["tiny"], "rust")
    assert cell.status == "failed"
    assert cell.reason == "orders lost: the client sent 25 (warm-up included), the server processed 22"
    assert cell.result is not None  # the measurement is kept


def test_why_not_clean_and_names_are_pure():
    sc = config.Scenario(name="s", connections=1, warmup=5, orders=20)
    assert result_name("s", "go", 1, 1) == "s/go.json"
    assert result_name("s", "go", 2, 3) == "s/go.r2.json"
    assert default_timeout_s(sc) == pytest.approx(25 / 200 + 60)
    open_sc = config.Scenario(name="o", connections=1, warmup=0, orders=5000, rate=1000)
    assert default_timeout_s(open_sc) == pytest.approx(7.5 + 60)

    class R:  # the fields why_not_clean() reads
        errors, error_kinds, interrupted, orders, warmup = 0, {}, False, 20, 5

    assert why_not_clean(R, sc, 25) is None
    assert why_not_clean(R, sc, 26) == "the server processed 26 orders, the client says it sent 25"
    R.orders = 19
    assert why_not_clean(R, sc, 24) == "the client measured 19 orders, 20 were asked for"
