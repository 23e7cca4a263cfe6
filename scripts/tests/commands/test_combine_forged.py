"""`hftbench combine` believes nothing a leg's PR code could write (judge/legcheck.py): real
legs, each artifact then forged the way PR code on that runner could forge it (an empty
guarded list, looks = 1000, a results.json of another commit or another leg, a record that is
not the runner's calibration, counts that do not add up, an artifact under another name), and
each forgery fails the check with the leg, the field and the reason in combine's output. A
missing leg fails the check unless the base's pool.yaml marks its runner optional."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hftbench.judge.rounds import AB_ROUNDS
from support.combine_world import combine, copy_legs, needs_binaries, pool_file, record, verdict

pytestmark = needs_binaries
CHECK_FAILED = 3  # combine.CHECK_FAILED: the verdict stands, the pool's check cannot pass


@pytest.fixture(scope="module")
def world(pool_legs):
    """Legs a and b of an A/A ("aa": head = base) and of a head 30 µs slower ("slow"), the pool
    file, and the commits: the event's SHAs. The session's legs (conftest.py), which
    test_combine.py judges too: each forgery below is a copy of them, edited."""
    return pool_legs


def _edit(legs: Path, name: str, **fields) -> None:
    doc = verdict(legs, name)
    doc.update(fields)
    (legs / f"pr-bench-{name}" / "verdict.json").write_text(json.dumps(doc))


def _run(legs: Path, name: str, side: str, i: int = 0) -> Path:
    return legs / f"pr-bench-{name}" / "ab" / side / verdict(legs, name)[side]["run_ids"][i]


def _aa(world, tmp_path, capsys, *extra: str, pool: Path | None = None) -> tuple[int, dict, str]:
    """combine of the (forged) A/A legs in tmp_path/legs, with the event's SHAs."""
    shas = ("--base-sha", world["base"], "--head-sha", world["base"])
    code, doc = combine(tmp_path / "legs", pool or world["pool"], tmp_path / "out", *shas, *extra)
    return code, doc, capsys.readouterr().err


def test_the_real_legs_pass_with_the_event_s_commits(world, tmp_path, capsys):
    copy_legs(world["aa"], tmp_path / "legs")
    code, doc, err = _aa(world, tmp_path, capsys, "--legs-result", "success")
    assert code == 0 and doc["pool"]["check"] == {"passes": True, "why": []}, err
    assert [r["state"] for r in doc["pool"]["runners"]] == ["complete", "complete"]


def test_an_empty_guarded_list_gates_nothing_of_the_pool_s(world, tmp_path, capsys):
    """(a) Both legs of the slowed head claim a calibration that guards nothing: combine judges
    by the base's gates.yaml (no digest in pool.yaml), and the regression fails the check."""
    legs = copy_legs(world["slow"], tmp_path / "legs")
    for name in ("a", "b"):
        doc = verdict(legs, name)
        unguarded = [
            {"series": k.split()[0], "metric": k.split()[1], "why": "forged"} for k in doc["guarded"]
        ]
        _edit(legs, name, calibration="/etc/hft-bench/calibration.json", guarded=[], unguarded=unguarded)
    code, doc = combine(legs, world["pool"], tmp_path / "out", "--head-sha", world["head"])
    err = capsys.readouterr().err
    assert code == 1 and doc["status"] == "regression", err
    assert "latency-1c/hft" in err and "p50_us" in err
    p50 = next(r for r in doc["results"] if r["metric"] == "p50_us")
    assert p50["gated"] and p50["verdict"] == "regression"
    # A record that guards nothing, uploaded where pool.yaml names none: refused.
    record(legs, "a", [])
    code, doc = combine(legs, world["pool"], tmp_path / "out2")
    err = capsys.readouterr().err
    assert code != 0 and "leg a: calibration.json: the leg uploaded a record" in err
    assert "pool.yaml gives runner a no calibration_sha256" in err


def test_looks_1000_is_refused(world, tmp_path, capsys):
    """(b) looks = 1000 would divide every alpha until nothing is significant."""
    legs = copy_legs(world["aa"], tmp_path / "legs")
    _edit(legs, "b", looks=1000)
    code, doc, err = _aa(world, tmp_path, capsys)
    step = AB_ROUNDS.step  # pool.yaml gives repeats and max_repeats; the step is ab's
    why = f"leg b: verdict.json looks: 1000, the pool's rounds (pool.yaml `rounds`: 8 to 8 by {step}) give 1"
    assert code == CHECK_FAILED and why in err
    assert {r["name"]: r["state"] for r in doc["pool"]["runners"]} == {"a": "complete", "b": "refused"}
    assert any(why in w for w in doc["pool"]["check"]["why"])
    assert (
        "- **This check fails**: leg b: verdict.json looks: 1000"
        in (tmp_path / "out" / "summary.md").read_text()
    )
    # Both legs forged: nothing left to judge, and the error names each.
    _edit(legs, "a", looks=1000)
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == 2 and "leg a: verdict.json looks: 1000" in err and "leg b: verdict.json looks" in err


def test_another_commit_s_results_json_is_refused(world, tmp_path, capsys):
    """(c) A head round swapped for a round of another commit (the slowed head's, here a
    faster one's in spirit: any results the PR code prefers)."""
    legs = copy_legs(world["aa"], tmp_path / "legs")
    shutil.copy(_run(world["slow"], "b", "head") / "results.json", _run(legs, "b", "head") / "results.json")
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "leg b: head run" in err and "results.json git.commit" in err, err
    assert "another commit's results" in err


def test_the_event_s_commits_decide_not_the_leg_s(world, tmp_path, capsys):
    """(c) The legs measured HEAD~1 against itself; the pull request's head is HEAD."""
    copy_legs(world["aa"], tmp_path / "legs")
    code, doc = combine(tmp_path / "legs", world["pool"], tmp_path / "out", "--head-sha", world["head"])
    err = capsys.readouterr().err
    assert code == 2 and f"the pull request's head is {world['head'][:12]}" in err
    assert "leg a: verdict.json head.commit" in err and "leg b: verdict.json head.commit" in err


def test_another_leg_s_results_are_refused(world, tmp_path, capsys):
    """(c) Leg a's round copied into b: under b's name (its run_id says otherwise), or listed by
    b under its own name (then both legs hold one run id, and neither is believed)."""
    legs = copy_legs(world["aa"], tmp_path / "legs")
    shutil.copy(_run(legs, "a", "head") / "results.json", _run(legs, "b", "head") / "results.json")
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "results.json run_id" in err and "moved from another run folder" in err
    shutil.rmtree(legs / "pr-bench-b")
    shutil.copytree(world["aa"] / "pr-bench-b", legs / "pr-bench-b")
    theirs = _run(legs, "a", "head")
    shutil.copytree(theirs, legs / "pr-bench-b" / "ab" / "head" / theirs.name)
    doc = verdict(legs, "b")
    _edit(legs, "b", head=dict(doc["head"], run_ids=[theirs.name, *doc["head"]["run_ids"][1:]]))
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == 2 and f"{theirs.name} is also leg a's" in err and f"{theirs.name} is also leg b's" in err


def test_a_record_that_is_not_the_runner_s_calibration_is_refused(world, tmp_path, capsys):
    """(d) pool.yaml names the digest of a's record; the leg uploads another (one that guards
    nothing), or none."""
    legs = copy_legs(world["aa"], tmp_path / "legs")
    row = {"series": "latency-1c/hft", "metric": "p50_us", "guarded": True, "mde": 1.01}
    digest = record(legs, "a", [row])
    pool = pool_file(tmp_path / "pool.yaml", {"a": {"calibration_sha256": digest}})
    code, doc, err = _aa(world, tmp_path, capsys, pool=pool)
    assert code == 0 and doc["pool"]["runners"][0]["calibration"] == digest, err
    forged = record(legs, "a", [dict(row, guarded=False, why_not="forged")])
    code, doc, err = _aa(world, tmp_path, capsys, pool=pool)
    assert code == CHECK_FAILED and f"leg a: calibration.json: sha256 {forged}" in err
    assert f"pool.yaml's calibration_sha256 for runner a is {digest}" in err
    (legs / "pr-bench-a" / "calibration.json").unlink()
    code, doc, err = _aa(world, tmp_path, capsys, pool=pool)
    assert code == CHECK_FAILED and "leg a: calibration.json: missing" in err


def test_counts_rounds_and_design_that_do_not_add_up_are_refused(world, tmp_path, capsys):
    legs = copy_legs(world["aa"], tmp_path / "legs")
    path = _run(legs, "b", "base") / "results.json"
    doc = json.loads(path.read_text())
    doc["cells"][0]["result"].update(ok=1990, errors=10)  # adds up to the orders, not the histogram
    path.write_text(json.dumps(doc))
    code, _, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "cell latency-1c/hft histogram: holds 2000 latencies for 1990 ok" in err
    shutil.copy(_run(world["aa"], "b", "base") / "results.json", path)
    _edit(legs, "b", ab=dict(verdict(legs, "b")["ab"], rounds_per_side=9))
    code, _, err = _aa(world, tmp_path, capsys)
    assert (
        code == CHECK_FAILED and "leg b: verdict.json ab.rounds_per_side: 9, outside the pool's 8..8" in err
    )
    _edit(legs, "b", ab=dict(verdict(legs, "b")["ab"], rounds_per_side=8, design="paired-rounds"))
    code, _, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "leg b: verdict.json design: 'paired-rounds'" in err


def test_an_artifact_under_another_name_fails_the_check(world, tmp_path, capsys):
    legs = copy_legs(world["aa"], tmp_path / "legs")
    shutil.copytree(legs / "pr-bench-a", legs / "pr-bench-c")
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "unexpected artifact 'pr-bench-c'" in err
    shutil.rmtree(legs / "pr-bench-c")
    _edit(legs, "b", pool_leg="a")  # a's verdict, uploaded as b's
    code, doc, err = _aa(world, tmp_path, capsys)
    assert code == CHECK_FAILED and "leg b: verdict.json pool_leg: 'a'" in err
    _edit(legs, "b", pool_leg="b")
    code, doc, err = _aa(world, tmp_path, capsys, "--legs-result", "failure")  # an upload refused
    assert code == CHECK_FAILED and "a leg's job ended failure though every leg's artifact is complete" in err


def test_a_missing_leg_fails_the_check_unless_the_pool_marks_it_optional(world, tmp_path, capsys):
    legs = copy_legs(world["aa"], tmp_path / "legs")
    shutil.rmtree(legs / "pr-bench-b")
    code, doc, err = _aa(world, tmp_path, capsys, "--legs-result", "failure")
    assert code == CHECK_FAILED and doc["status"] != "regression" and doc["exit_code"] == CHECK_FAILED
    assert "leg b missing: no artifact" in err and "pool.yaml requires this runner" in err
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "(partial: b did not report)" in summary.splitlines()[0]
    assert "- **This check fails**: leg b missing: no artifact" in summary
    optional = pool_file(tmp_path / "pool.yaml", {"b": {"optional": True}})
    code, doc, err = _aa(world, tmp_path, capsys, "--legs-result", "failure", pool=optional)
    assert code == 0 and doc["pool"]["check"]["passes"] and doc["partial"], err
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "(partial: b did not report (optional))" in summary.splitlines()[0]
    assert "- `b` is optional (pool.yaml): the check passes without it." in summary
    # Optional or not, a forged leg is refused and fails the check.
    shutil.copytree(world["aa"] / "pr-bench-b", legs / "pr-bench-b")
    _edit(legs, "b", looks=1000)
    code, doc, err = _aa(world, tmp_path, capsys, pool=optional)
    assert code == CHECK_FAILED and "(refused, optional or not)" in err


def test_a_leg_that_hides_its_failures_is_caught(world, tmp_path, capsys):
    """The A/A legs' own verdicts count no failure; leg a's run folders say its head broke a
    round (its client timed out). Combine recounts from the run folders, never from a leg's
    verdict: the pool's verdict is a regression naming the round. The same round's cell left
    out of results.json, to hide it, is refused. (Whether the A/A's latency rows decided in 8
    rounds is the host's business: an undecided row leaves the failure row as it is.)"""
    legs = copy_legs(world["aa"], tmp_path / "legs")
    own = [r for r in verdict(legs, "a")["results"] if r["metric"] == "errors"]
    assert own and all(r["verdict"] != "regression" for r in own), own
    path = _run(legs, "a", "head", 1) / "results.json"
    doc = json.loads(path.read_text())
    cell = doc["cells"][0]
    why = "timeout: client-hft --duet-url ran past 40 s; killed"
    cell.update(status="failed", result=None, reason=why)
    path.write_text(json.dumps(doc))
    code, out, err = _aa(world, tmp_path, capsys)
    row = next(r for r in out["results"] if r["metric"] == "errors" and r["scenario"] == cell["scenario"])
    assert row["gated"] and row["verdict"] == "regression", row
    assert f"head broke 1 of 8 rounds: round 02: {why}" in row["reason"]
    assert out["status"] == "regression" and code != 0, err
    doc["cells"].pop(0)
    path.write_text(json.dumps(doc))
    code, _, err = _aa(world, tmp_path, capsys)
    assert (
        code == CHECK_FAILED
        and f"cells: no cell of {cell['scenario']}/{cell['client']}: a cell left out of the round" in err
    )
