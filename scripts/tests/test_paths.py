"""paths: where the repository's parts are, and fresh run folders that never reuse one."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from hftbench import paths
from hftbench.run import new_run_dir


def test_a_fresh_dir_is_never_one_that_exists(tmp_path):
    (tmp_path / "run_x").mkdir()
    (tmp_path / "run_x" / "results.json").write_text("{}")
    assert paths.fresh_dir(tmp_path, "run_x") == tmp_path / "run_x_2"
    assert paths.fresh_dir(tmp_path, "run_x") == tmp_path / "run_x_3"
    assert (tmp_path / "run_x" / "results.json").read_text() == "{}"  # the first run is untouched


def test_runs_started_in_the_same_second_get_folders_of_their_own(tmp_path):
    def start(_: int):
        return paths.fresh_dir(tmp_path / "results", "run_20261124T000000Z")

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(start, range(16)))
    assert len(set(made)) == 16
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(p.name for p in made)


def test_a_run_folder_is_named_by_the_utc_second(tmp_path):
    run_dir = new_run_dir(tmp_path)
    assert run_dir.is_dir() and re.fullmatch(r"run_\d{8}T\d{6}Z(_\d+)?", run_dir.name)
