"""Main's creep: small slowdowns that each passed, added up against a fixed reference
(judge/creep.py, publish/creep_issue.py, `hftbench creep`)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from hftbench import answers
from hftbench.cli import main as cli_main
from hftbench.judge import creep
from hftbench.judge.gates import load_gates
from hftbench.publish import creep_issue
from hftbench.stored_verdict import read_any

P50 = "latency-1c/hft p50_us"
NOW = datetime(2026, 11, 28, tzinfo=UTC)


def stored_verdict(base: str, ratio: float, half_width: float, verdict: str) -> dict:
    """The store's copy of one push's verdict against the push before it (store/entry.py)."""
    return {
        "status": verdict,
        "base": base,
        "partial": False,
        "confidence": 0.99,
        "looks": 1,
        "gated": [
            {
                "scenario": "latency-1c",
                "client": "hft",
                "metric": "p50_us",
                "ratio": ratio,
                "ci": [ratio * (1 - half_width), ratio * (1 + half_width)],
                "mde": 1.01,
                "verdict": verdict,
            },
        ],
    }


def history(ratios: list[float], half_width: float = 0.005, verdict: str = answers.SLOWER) -> list[dict]:
    """Store entries c0 (the first push, not compared) .. cN, one a day, oldest first."""
    first = (NOW - timedelta(days=len(ratios))).isoformat()
    entries = [{"commit": "c0" * 20, "branch": "main", "date": first, "message": "first", "verdict": None}]
    for i, r in enumerate(ratios, 1):
        entries.append(
            {
                "commit": f"c{i}" * 20,
                "branch": "main",
                "message": f"push {i}",
                "date": (NOW - timedelta(days=len(ratios) - i)).isoformat(),
                "verdict": stored_verdict(f"c{i - 1}" * 20, r, half_width, verdict),
            }
        )
    return entries


def newest(entries: list[dict]) -> creep.Link:
    e = entries[-1]
    return creep.link_from_verdict(
        read_any(e["verdict"]), commit=e["commit"], date=e["date"], message=e["message"]
    )


def test_five_small_slowdowns_that_each_passed_are_caught_together_with_their_commits():
    entries = history([1.03] * 5)  # each +3 %, known to ±0.5 %: "slower, under the gate" alone
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    (row,) = [r for r in found.rows if r.key == P50]
    assert row.ratio == pytest.approx(1.03**5) and row.verdict == answers.REGRESSION
    assert row.ci[0] > 1.10 and row.measured_in == 5
    assert [m.commit[:2] for m in row.makers] == ["c5", "c4", "c3", "c2", "c1"]
    assert found.status == answers.REGRESSION and found.reference == "c0" * 20
    assert "not compared" in found.stopped


def test_tail_exceedances_do_not_chain_each_comparison_draws_its_own_line():
    """Each push's P99.9 exceedance is a share past a line that comparison drew (the round's
    P99.9 over both sides): five x1.3 steps are not x3.7 of anything, so creep leaves them out
    while it still chains the P50 beside them."""
    entries = history([1.03] * 5)
    for e in entries[1:]:
        row = dict(e["verdict"]["gated"][0], metric="p999_exceedance", ratio=1.3, ci=[1.1, 1.5])
        e["verdict"]["gated"].append(row)
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    assert [r.key for r in found.rows] == [P50]
    assert "latency-1c/hft p999_exceedance" in found.links[0].steps


def test_noise_around_one_does_not_creep():
    entries = history([1.004, 0.996, 1.003, 0.997, 1.002, 0.998], verdict=answers.NO_CHANGE)
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    assert found.status == answers.NO_CHANGE and not found.creeping()


def test_a_chain_as_noisy_as_its_links_is_not_called_creep():
    # +12 % in all, but each push known only to ±12 %: the chain's interval holds 1.
    entries = history([1.04, 1.04, 1.035], half_width=0.12, verdict=answers.INCONCLUSIVE)
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    (row,) = found.rows
    assert row.ratio > 1.10 and row.verdict != answers.REGRESSION


def test_the_reference_is_the_baseline_days_back_or_the_commit_named():
    entries = history([1.03] * 6)
    since = NOW - timedelta(days=3, hours=1)  # c3 is the baseline stored 3 days back
    by_days = creep.chain(newest(entries), entries[:-1], since=since)
    assert by_days.reference == "c2" * 20 and len(by_days.links) == 4
    named = creep.chain(newest(entries), entries[:-1], reference="c4c4c4c")
    assert named.reference.startswith("c4") and [ln.commit[:2] for ln in named.links] == ["c6", "c5"]
    assert "reached the reference" in named.stopped


def test_a_push_missing_from_the_store_ends_the_chain_and_says_so():
    entries = history([1.03] * 4)
    del entries[2]  # c2's run never reached the store
    found = creep.chain(newest(entries), entries[:-1])
    assert [ln.commit[:2] for ln in found.links] == ["c4", "c3"]
    assert "no run of c2" in found.stopped


def test_the_steps_spread_is_read_at_the_intervals_level():
    v = stored_verdict("b" * 40, 1.0, 0.0, answers.NO_CHANGE)
    v["gated"][0]["ci"] = [math.exp(-0.01), math.exp(0.01)]
    one = creep.link_from_verdict(read_any(v), commit="h", date=None, message="")
    # `confidence` is the level the intervals were drawn at, the looks already in it: the looks
    # do not narrow the spread a second time, a wider level does
    v["looks"] = 4
    four = creep.link_from_verdict(read_any(v), commit="h", date=None, message="")
    assert four.steps[P50].se == pytest.approx(one.steps[P50].se)
    v["confidence"] = 0.9975
    wider = creep.link_from_verdict(read_any(v), commit="h", date=None, message="")
    assert wider.steps[P50].se < one.steps[P50].se
    assert one.steps[P50].se == pytest.approx(0.01 / 2.5758, rel=1e-3)
    assert (
        creep.link_from_verdict(read_any({**v, "partial": True}), commit="h", date=None, message="") is None
    )


def test_sixty_pushes_at_seven_tenths_of_a_percent_creep_against_the_fixed_reference_only():
    # One push a day, each +0.7 % and "slower, under the gate" alone: a window of ten days
    # back never sees more than +7 %, while the reference a person fixed (c0, 60 pushes back)
    # sees all of it, and the creep issue opens naming it.
    entries = history([1.007] * 60)
    window = creep.judge(
        creep.chain(newest(entries), entries[:-1], since=NOW - timedelta(days=10, hours=1)), load_gates()
    )
    assert window.status == answers.NO_CHANGE and window.rows[0].ratio < 1.08
    fixed = creep.judge(creep.chain(newest(entries), entries[:-1], reference="c0" * 20), load_gates())
    (row,) = fixed.rows
    assert fixed.status == answers.REGRESSION and row.measured_in == 60
    assert row.ratio == pytest.approx(1.007**60) and row.ci[0] > 1.10
    from dataclasses import asdict

    opened = creep_issue.issue_action({"suite": "pr", "status": fixed.status, **asdict(fixed)}, None)
    assert opened.kind == "open" and "c0" * 5 in opened.body


def issue_doc(ratios: list[float]) -> dict:
    from dataclasses import asdict

    entries = history(ratios)
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    return {"suite": "pr", "status": found.status, **asdict(found)}


def test_the_creep_issue_opens_refreshes_quietly_and_closes():
    crept = issue_doc([1.03] * 5)
    opened = creep_issue.issue_action(crept, None)
    assert opened.kind == "open" and "c5c5c5c5c5" in opened.body and "+15.9%" in opened.title
    assert "hftbench ab --base " + "c0" * 20 in opened.body
    issue = {"number": 7, "body": opened.body}
    again = creep_issue.issue_action(crept, issue)
    assert again.kind == "update" and again.comment is None  # same keys: no comment noise
    fixed = creep_issue.issue_action(issue_doc([1.03, 1.03, 0.94]), issue)
    assert fixed.kind == "close" and "Within the gate again" in fixed.comment
    assert creep_issue.issue_action(issue_doc([1.0] * 3), None).kind == "none"


def write_store(path, entries: list[dict]) -> None:
    (path / "shards" / "pr").mkdir(parents=True)
    (path / "index.json").write_text(
        json.dumps({"schema_version": 1, "suites": {"pr": {"shards": ["2026-11"]}}})
    )
    runs = [{"run_id": f"run_{i}", "runner": "r1", **e} for i, e in enumerate(entries)]
    doc = {"schema_version": 1, "suite": "pr", "month": "2026-11", "runs": runs}
    (path / "shards" / "pr" / "2026-11.json").write_text(json.dumps(doc))


def test_hftbench_creep_fails_on_creep_and_writes_its_report(tmp_path, capsys):
    write_store(tmp_path / "store", history([1.03] * 5))
    code = cli_main(
        ["creep", "--store", str(tmp_path / "store"), "--days", "100000", "--out", str(tmp_path / "out")]
    )
    assert code == 1
    doc = json.loads((tmp_path / "out" / "creep.json").read_text())
    assert doc["status"] == answers.REGRESSION and len(doc["links"]) == 5
    assert "The pushes that made it slower" in (tmp_path / "out" / "creep.md").read_text()
    assert "❌ Creep on main since c0c0c0c0c0" in capsys.readouterr().err


def test_hftbench_creep_passes_without_creep(tmp_path):
    write_store(tmp_path / "store", history([1.002, 0.998, 1.001], verdict=answers.NO_CHANGE))
    assert cli_main(["creep", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "out")]) == 0


def test_a_push_that_was_a_regression_alone_is_the_regression_issue_s_not_the_creep_s():
    entries = history([1.03, 1.03])
    entries.append(
        {
            "commit": "c3" * 20,
            "branch": "main",
            "message": "push 3",
            "date": NOW.isoformat(),
            "verdict": stored_verdict("c2" * 20, 1.40, 0.01, answers.REGRESSION),
        }
    )
    found = creep.judge(creep.chain(newest(entries), entries[:-1]), load_gates())
    (row,) = found.rows
    assert row.verdict == answers.REGRESSION and row.regressed_alone
    assert found.status == answers.NO_CHANGE and not found.creeping()  # one issue per slowdown
    from dataclasses import asdict

    doc = {"suite": "pr", "status": found.status, **asdict(found)}
    assert creep_issue.issue_action(doc, None).kind == "none"
    assert "the regression issue has it" in creep_issue.markdown(doc)
