"""paths: where the repository's parts are, and fresh run folders that never reuse one."""

from __future__ import annotations

import json
import re
import secrets
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hftbench import paths
from hftbench.errors import UsageError
from hftbench.measure.run import new_run_dir
from hftbench.results import load_run
from hftbench.store import history as hs
from support.gate_synth import latency_run, result_doc, write_run


def test_a_fresh_dir_is_never_one_that_exists(tmp_path, monkeypatch):
    (tmp_path / "run_x_aaaaaa").mkdir()
    (tmp_path / "run_x_aaaaaa" / "results.json").write_text("{}")
    tokens = iter(["aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(tokens))
    assert paths.fresh_dir(tmp_path, "run_x") == tmp_path / "run_x_bbbbbb"  # a taken token is drawn again
    assert (tmp_path / "run_x_aaaaaa" / "results.json").read_text() == "{}"  # the first run is untouched


def test_runs_started_in_the_same_second_get_folders_of_their_own(tmp_path):
    def start(_: int):
        return paths.fresh_dir(tmp_path / "results", "run_20261124T000000Z")

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(start, range(16)))
    assert len(set(made)) == 16
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(p.name for p in made)


def test_a_run_folder_is_named_by_the_utc_second_and_a_random_suffix(tmp_path):
    run_dir = new_run_dir(tmp_path)
    assert run_dir.is_dir() and re.fullmatch(r"run_\d{8}T\d{6}Z_[0-9a-f]{6}", run_dir.name)


def test_a_rounds_run_folder_names_its_side_and_round_and_its_round_is_the_pairing_key(tmp_path):
    from hftbench.judge import designs, hidden

    base = paths.round_dir(tmp_path, "base", 7, stamp="20261124T000000Z")
    head = paths.round_dir(tmp_path, "head", 7, stamp="20261124T000000Z")
    assert re.fullmatch(r"run_20261124T000000Z_base07_[0-9a-f]{6}", base.name) and base.is_dir()
    assert base.parent == tmp_path / "base" and head.parent == tmp_path / "head"
    assert designs.round_key(base.name) == designs.round_key(head.name) == "07"
    solo = paths.run_dir(tmp_path / "solo", "solo", 3)
    assert hidden._SOLO.search(solo.name).group(1) == "03"  # calibrate's solo runs pair by it too


def test_two_runs_started_in_the_same_second_on_two_runners_are_both_stored(tmp_path, monkeypatch):
    """The run folder's name is the history store's run_id: the same second must not make
    the second add replace the first."""
    monkeypatch.setattr(paths, "utc_stamp", lambda: "20261124T000000Z")
    rng = np.random.default_rng(3)
    store = tmp_path / "store"
    ids = []
    for runner in ("runner-a", "runner-b"):
        made = new_run_dir(tmp_path / runner)
        made.rmdir()  # write_run makes the folder itself
        doc = result_doc("large", "rust", latency_run(rng, 2_000))
        hs.add_run(store, load_run(write_run(made.parent, made.name, {("large", "rust"): [doc]})))
        ids.append(made.name)
    shard = json.loads((store / "shards" / "pr" / "2026-11.json").read_text())
    assert ids[0] != ids[1] and sorted(r["run_id"] for r in shard["runs"]) == sorted(ids)


def test_the_default_gates_come_from_the_repository_in_use_not_the_installed_package(tmp_path, monkeypatch):
    from hftbench.judge.gates import load_gates

    (tmp_path / "bench-config").mkdir()
    (tmp_path / "bench-config" / "gates.yaml").write_text("schema_version: 1\nnot a gates file: [\n")
    monkeypatch.setenv("HFTBENCH_ROOT", str(tmp_path))
    with pytest.raises(UsageError, match=re.escape(str(tmp_path / "bench-config" / "gates.yaml"))):
        load_gates()
