"""verdict_text (every verdict text from verdict.json) and regression_issue's decisions."""

from __future__ import annotations

import copy
import json
import re

import pytest
from hftbench import cli
from hftbench.publish import method_text, regression_issue, verdict_cells, verdict_text
from hftbench.verdict import MetricResult, Verdict

SHA_BASE, SHA_HEAD = "1" * 40, "2" * 40


def _row(metric, verdict, ratio, ci, mde=1.06, gated=True, client="hft", **extra):
    return {
        "scenario": "latency-1c",
        "client": client,
        "metric": metric,
        "gated": gated,
        "base_runs": 16,
        "head_runs": 16,
        "min_samples": 50000,
        "threshold": 1.10,
        "verdict": verdict,
        "ratio": ratio,
        "ci": ci,
        "p_value": 0.0005,
        "p_adjusted": 0.001,
        "base_value": 20.0,
        "head_value": 20.0 * ratio,
        "reason": None,
        "mde": mde,
        "settle_runs": None,
        **extra,
    }


def _doc(status, rows, **extra):
    return {
        "schema_version": 1,
        "status": status,
        "exit_code": int(status == "regression"),
        "gates": "bench-config/gates.yaml",
        "confidence": 0.95,
        "looks": 3,
        "suite": "pr",
        "base": {"commit": SHA_BASE, "ref": "main", "runs": 16},
        "head": {"commit": SHA_HEAD, "ref": "feature/@everyone <b>", "runs": 16},
        "ab": {"rounds_per_side": 16, "measure_s": 98.0},
        "partial": False,
        "results": rows,
        **extra,
    }


REGRESSION = _doc(
    "regression",
    [
        _row("p99_us", "regression", 1.23, [1.15, 1.31]),
        _row("p50_us", "no_change", 1.01, [0.99, 1.03], mde=1.02),
        _row("p50_us", "no_change", 1.0, [0.98, 1.02], gated=False, client="rust", reason="reported only"),
    ],
)
NO_CHANGE = _doc(
    "no_change",
    [_row("p99_us", "no_change", 0.98, [0.93, 1.04]), _row("p50_us", "no_change", 1.0, [0.99, 1.01])],
)


def test_headline_first_then_refs_never_paths():
    md = verdict_text.markdown(Verdict.from_json(REGRESSION))
    first, _, refs = md.splitlines()[:3]
    assert first == "## ❌ Regression: latency-1c/hft P99 +23.0%"
    assert f"`main` ({SHA_BASE[:10]})" in refs and SHA_HEAD[:10] in refs and "16 interleaved rounds" in refs
    assert "/tmp" not in md and "/work" not in md


def test_each_gated_row_states_its_minimum_detectable_effect():
    md = verdict_text.markdown(Verdict.from_json(REGRESSION))
    rows = [line for line in md.splitlines() if line.startswith("| 🔴") or line.startswith("| ⚪")]
    assert rows[0].startswith("| 🔴 | latency-1c/hft | P99 |") and "≥ +6.0%" in rows[0]
    assert "≥ +2.0%" in rows[1] and "no change" in rows[1]
    assert "Reported only" in md  # the rust row is folded away


def test_no_change_headline_says_what_it_could_have_seen():
    assert verdict_text.headline(Verdict.from_json(NO_CHANGE)) == (
        "✅ No change: all 2 gated series × metrics within ±10%; each would have failed at +6.0% or more"
    )


def test_no_change_with_a_memory_row_names_its_band_in_bytes():
    memory = _row("memory_bytes_per_order", "no_change", 1.0, [-0.4, 0.5], mde=1.2, threshold=32.0)
    memory.update(ratio=None, base_value=0.1, head_value=0.2)
    doc = _doc("no_change", [_row("p99_us", "no_change", 1.0, [0.97, 1.03]), memory])
    assert verdict_text.headline(Verdict.from_json(doc)).startswith(
        "✅ No change: all 2 gated series × metrics within ±10% (memory per order: ±32 B/order)"
    )


def test_no_change_names_a_band_of_its_own_and_keeps_it_out_of_the_leading_could_detect():
    """P99.9 exceedance's band is x1.5: the headline must not read "within ±10%" of it, nor
    let its +55 % stand for what every row could have seen."""
    tail = _row("p999_exceedance", "no_change", 1.02, [0.85, 1.22], mde=1.55, threshold=1.5)
    tail.update(base_value=0.001, head_value=0.00102)
    doc = _doc("no_change", [_row("p99_us", "no_change", 1.0, [0.97, 1.03]), tail])
    assert verdict_text.headline(Verdict.from_json(doc)) == (
        "✅ No change: all 2 gated series × metrics within ±10% (P99.9 exceedance: ±50%, fails at "
        "+55.0%); each would have failed at +6.0% or more"
    )
    assert "| 0.1% | 0.102% |" in verdict_text.markdown(Verdict.from_json(doc))  # each side's share


def test_inconclusive_says_what_would_settle_it():
    why = "the interval is not inside -9.1% … +10.0%: about 40 runs a side would settle it"
    doc = _doc(
        "inconclusive", [_row("p99_us", "inconclusive", 1.06, [0.97, 1.16], settle_runs=40, reason=why)]
    )
    md = verdict_text.markdown(Verdict.from_json(doc))
    assert md.startswith("## 🟡 Inconclusive: 1 of 1 gated series × metrics undecided; about 40 runs a side")
    assert "about 40 runs a side would settle it" in md


def test_outside_text_cannot_mention_or_inject():
    md = verdict_text.markdown(Verdict.from_json(REGRESSION))
    assert "@everyone" not in md and "@\u200beveryone" in md and "<b>" not in md


HOSTILE = "x`<script>alert(1)</script>|@org/team #123\n## fake heading *[link](https://evil)*_"


def _hostile_regression():
    doc = copy.deepcopy(REGRESSION)
    for r in doc["results"]:
        r["scenario"] = HOSTILE
    doc["results"][1].update(verdict="inconclusive", reason=HOSTILE)
    doc["suite"] = HOSTILE
    doc["bisect"] = {
        "status": "between",
        "good": SHA_BASE,
        "bad": "`@x" + SHA_HEAD,
        "reason": HOSTILE,
        "steps": [
            {
                "commit": SHA_HEAD,
                "subject": HOSTILE,
                "rounds": 4,
                "decision": "bad",
                "vs_good": {"ratio": 1.2, "verdict": "regression"},
                "vs_bad": {"ratio": 1.0, "verdict": "no_change"},
            }
        ],
    }
    return doc


def _inert(text: str) -> None:
    assert "<script" not in text and "@org" not in text and "#123" not in text, text
    prose = re.sub(r"(?<!\\)`[^`]*`", "", text)  # a code span shows its text as written
    assert "\n## fake" not in text and "[link](" not in prose and "*[" not in prose, prose


def test_a_hostile_scenario_name_renders_inert_in_every_body_and_the_issue_title():
    doc = _hostile_regression()
    for body in (
        verdict_text.markdown(Verdict.from_json(doc)),
        verdict_text.comment(Verdict.from_json(doc)),
        verdict_text.issue(Verdict.from_json(doc)),
    ):
        _inert(body)
        # every table row still has its 10 cells: no `|` of the name split one
        rows = [line for line in body.splitlines() if line.startswith("| 🔴") or line.startswith("| 🟡")]
        assert rows and all(len(re.findall(r"(?<!\\)\|", line)) == 10 for line in rows), rows
        assert len(re.findall(r"(?<!\\)`", body)) % 2 == 0  # no code span left open by the name
    action = regression_issue.issue_action(Verdict.from_json(doc), None)
    title = action.title  # plain text on GitHub: one line, no mention, issue link, code span or tag
    assert not [c for c in ("@org", "#123", "\n", "`", "<") if c in title], title
    _inert(action.body)
    assert action.body.count("-->") == 1  # the hidden marker is not closed early by the name
    assert regression_issue.parse_marker(action.body)[0].startswith("x__script_alert_1___script___org_team")


def test_a_huge_verdict_is_folded_under_the_comment_limit():
    doc = copy.deepcopy(REGRESSION)
    doc["results"] += [
        _row("p99_us", "no_change", 1.0, [0.99, 1.01], gated=False, client=f"c{i}") for i in range(3000)
    ]
    doc["results"] += [_row("p50_us", "no_change", 1.0, [0.99, 1.01], client=f"g{i}") for i in range(2000)]
    body = verdict_text.comment(
        Verdict.from_json(doc), run_url="https://github.com/acme/hft-bench/actions/runs/1"
    )
    assert len(body) <= verdict_text.GITHUB_BODY_LIMIT
    assert body.startswith(verdict_text.STICKY_MARKER + "\n## ❌ Regression: latency-1c/hft P99")
    assert "left out" in body and "actions/runs/1" in body


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        (
            _row("p99_us", "inconclusive", 1.0, [0.9, 1.1], mde=float("inf")),
            [
                "🟡",
                "P99",
                "20.0 µs",
                "20.0 µs",
                "= +0.0%",
                "-10.0% … +10.0%",
                "none (too few runs)",
                "inconclusive",
            ],
        ),
        (
            _row(
                "p50_us", "no_change", 0.97, [0.95, 0.99], gated=False, base_value=1234.56, head_value=1197.52
            ),
            ["▫️", "P50", "1,234.6 µs", "1,197.5 µs", "▼ -3.0%", "-5.0% … -1.0%", "≥ +6.0%", "no change"],
        ),
        (
            _row(
                "throughput_rps",
                "no_change",
                0.99,
                [0.98, 1.0],
                gated=False,
                base_value=43400.5,
                head_value=42966.4,
            ),
            ["▫️", "throughput", "43,400/s", "42,966/s", "▼ -1.0%", "-2.0% … +0.0%", "≥ +6.0%", "no change"],
        ),
        (
            {
                **_row("errors", "regression", 1.0, None, mde=None, base_value=0.0, head_value=0.0012),
                "ratio": None,
            },
            ["🔴", "error rate", "0%", "0.12%", "▲ +0.12 pt", "–", "–", "regression"],
        ),
        (
            {
                **_row(
                    "p99_us",
                    "not_gated",
                    1.0,
                    [float("nan")] * 2,
                    mde=None,
                    gated=False,
                    base_value=None,
                    head_value=None,
                ),
                "ratio": None,
            },
            ["▫️", "P99", "–", "–", "–", "–", "–", "not gated"],
        ),
    ],
)
def test_row_cells_format_each_kind_of_value(row, cells):
    """The cells the summary's table and the history store's rows show (thousands, rates, error
    points, missing values, no detectable effect): written here, once, for every surface."""
    got = verdict_cells.row_cells(MetricResult.from_json(row))
    assert [got[0], *got[2:]] == cells and got[1] == f"latency-1c/{row['client']}"
    assert verdict_cells.table_row(MetricResult.from_json(row)) == "| " + " | ".join(got) + " |"


def test_headlines_name_three_then_count_and_say_when_more_runs_are_out_of_reach():
    many = [_row("p99_us", "regression", 1.1 + i / 100, [1.05, 1.2], client=f"c{i}") for i in range(5)]
    assert verdict_text.headline(Verdict.from_json(dict(_doc("regression", many), partial=True))) == (
        "❌ Regression (partial: interrupted): latency-1c/c0 P99 +10.0%, latency-1c/c1 P99 +11.0%, "
        "latency-1c/c2 P99 +12.0% and 2 more"
    )
    far = _row("p99_us", "inconclusive", 1.06, [0.97, 1.16], settle_runs=1563)
    assert verdict_text.headline(Verdict.from_json(_doc("inconclusive", [far]))).endswith(
        "; more than 200 runs a side would be needed to settle it: out of reach, the series is too noisy "
        "on this runner (read its MDE)"
    )


def test_partial_verdict_says_so():
    doc = dict(NO_CHANGE, partial=True)
    assert verdict_text.headline(Verdict.from_json(doc)).startswith("✅ No change (partial: interrupted)")


def test_a_harness_change_is_said_to_apply_after_merge_in_every_pr_text():
    assert "harness" not in verdict_text.comment(Verdict.from_json(REGRESSION))
    doc = dict(REGRESSION, harness_changes=["bench-config/gates.yaml", HOSTILE])
    for body in (verdict_text.markdown(Verdict.from_json(doc)), verdict_text.comment(Verdict.from_json(doc))):
        assert "changes the harness" in body and "takes effect after merge" in body
        assert "`bench-config/gates.yaml`" in body
        _inert(body)
        assert len(re.findall(r"(?<!\\)`", body)) % 2 == 0
    assert "code owners" not in verdict_text.comment(Verdict.from_json(doc))
    assert "code owners review it" in verdict_text.comment(
        Verdict.from_json(dict(doc, harness_changes=[".github/workflows/bench.yml"]))
    )
    many = dict(NO_CHANGE, harness_changes=[f"scripts/f{i}.py" for i in range(20)])
    note = method_text.harness_lines(Verdict.from_json(many))[0]
    assert note.count("`scripts/f") == method_text.HARNESS_SHOWN and "and 12 more" in note


def test_cli_renders_each_kind(tmp_path, capsys):
    path = tmp_path / "verdict.json"
    path.write_text(json.dumps(REGRESSION))
    assert cli.main(["verdict-text", str(path), "--as", "comment"]) == 0
    assert capsys.readouterr().out.startswith(verdict_text.STICKY_MARKER)
    assert cli.main(["verdict-text", str(path), "--as", "issue", "--out", str(tmp_path / "i.md")]) == 0
    assert (tmp_path / "i.md").read_text().startswith("Main at `feature/@\u200beveryone ‹b›`")
    assert cli.main(["verdict-text", str(tmp_path / "missing.json")]) == 2


# --- regression_issue.issue_action: the issue's life cycle, without a network ----------------

OPEN = {
    "number": 7,
    "body": regression_issue.marker("pr", ["latency-1c/hft:p99_us"]) + "\nold text",
    "user": {"login": "github-actions[bot]"},
}


def test_a_regression_opens_one_issue_with_its_marker():
    action = regression_issue.issue_action(Verdict.from_json(REGRESSION), None)
    assert action.kind == "open" and action.title.startswith(f"Latency regression on main at {SHA_HEAD[:10]}")
    assert regression_issue.parse_marker(action.body) == ("pr", ["latency-1c/hft:p99_us"])


def test_a_regression_while_one_is_open_updates_it():
    doc = copy.deepcopy(REGRESSION)
    doc["results"][1] = _row("p50_us", "regression", 1.3, [1.2, 1.4])
    action = regression_issue.issue_action(Verdict.from_json(doc), OPEN)
    assert action.kind == "update" and "regression again" in action.comment
    assert regression_issue.parse_marker(action.body)[1] == ["latency-1c/hft:p50_us", "latency-1c/hft:p99_us"]


def test_recovery_closes_only_when_every_listed_series_improved():
    improved = _doc("improvement", [_row("p99_us", "improvement", 0.8, [0.75, 0.85])])
    action = regression_issue.issue_action(Verdict.from_json(improved), OPEN)
    assert action.kind == "close" and action.comment.startswith(f"Recovered at {SHA_HEAD[:10]}")
    # A +12 % regression undone reads −11 %: significantly faster, under the gate; it recovers.
    faster = _doc("faster", [_row("p99_us", "faster", 0.89, [0.86, 0.92])])
    assert regression_issue.issue_action(Verdict.from_json(faster), OPEN).kind == "close"
    inconclusive = _doc("inconclusive", [_row("p99_us", "inconclusive", 0.89, [0.7, 1.1])])
    assert regression_issue.issue_action(Verdict.from_json(inconclusive), OPEN).kind == "none"
    assert (
        regression_issue.issue_action(Verdict.from_json(NO_CHANGE), OPEN).kind == "none"
    )  # not slower, not recovered either
    assert regression_issue.issue_action(Verdict.from_json(NO_CHANGE), None).kind == "none"


def test_a_reported_only_row_listed_for_its_warning_recovers_once_it_no_longer_warns_and_is_no_slower():
    """Reported only, its interval may never show a recovery significant (the act test's P99
    undone read x0.48, undecided): no warning and no slower closes; still slower keeps it open;
    a gated row still needs significance."""
    listed = dict(OPEN, body=regression_issue.marker("pr", ["latency-1c/hft:p99_us"]) + "\nold text")
    undone = _doc("no_change", [_row("p99_us", "inconclusive", 0.48, [0.2, 1.3], gated=False)])
    assert regression_issue.issue_action(Verdict.from_json(undone), listed).kind == "close"
    still = _doc("no_change", [_row("p99_us", "inconclusive", 1.05, [0.8, 1.3], gated=False)])
    assert regression_issue.issue_action(Verdict.from_json(still), listed).kind == "none"
    gated = _doc("inconclusive", [_row("p99_us", "inconclusive", 0.48, [0.2, 1.3])])
    assert regression_issue.issue_action(Verdict.from_json(gated), listed).kind == "none"


def test_a_partial_verdict_changes_no_issue():
    assert (
        regression_issue.issue_action(Verdict.from_json(dict(REGRESSION, partial=True)), None).kind == "none"
    )


@pytest.mark.parametrize("login", ["someone-else", None])
def test_a_marker_planted_by_someone_else_is_not_our_issue(tmp_path, login):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "fakes"))
    from github_api import FakeGitHub

    planted = dict(OPEN, state="open", labels=[{"name": "performance"}], title="x", user={"login": login})
    with FakeGitHub(tmp_path / "api", token="t", seed={"issues": [planted]}) as api:
        gh = regression_issue.GitHub(api.url, "acme/hft-bench", "t")
        assert gh.open_issue("pr", regression_issue.DEFAULT_BOT) is None


@pytest.mark.parametrize("command", ["verdict-text", "regression-issue", "pool"])
def test_the_hosted_runner_s_commands_run_without_numpy_or_scipy(tmp_path, command):
    """pr-comment, report-regression and pool-legs run `python3 -m hftbench verdict-text |
    regression-issue | pool` on a bare GitHub-hosted runner: nothing on their path may import
    numpy or scipy."""
    import subprocess
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[2]
    block = (
        "import sys, runpy; sys.modules.update(numpy=None, scipy=None); "
        "sys.argv = ['hftbench', *sys.argv[1:]]; runpy.run_module('hftbench', run_name='__main__')"
    )
    r = subprocess.run(
        [sys.executable, "-c", block, command, "--help"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(scripts), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_slower_change_under_the_gate_is_named_and_a_pool_row_decided_by_one_runner_names_it():
    slower = _doc(
        "slower",
        [_row("p50_us", "slower", 1.05, [1.03, 1.07]), _row("p99_us", "no_change", 1.0, [0.95, 1.05])],
    )
    head = verdict_text.headline(Verdict.from_json(slower))
    assert (
        head.startswith("⚠️ Slower, under the gate of 10%: latency-1c/hft P50 +5.0%")
        and "No change" not in head
    )
    alone = _row(
        "p50_us",
        "regression",
        0.993,
        [0.97, 1.02],
        reason="runner b alone: P50 +89.3%; pooled over the runners -0.7%",
    )
    head = verdict_text.headline(Verdict.from_json(_doc("regression", [alone])))
    assert head == "❌ Regression: latency-1c/hft runner b alone: P50 +89.3%", head


def test_latency_that_reads_faster_while_the_head_s_own_cpu_per_order_rose_is_called_a_disagreement():
    rows = [
        _row("cpu_us_per_order", "regression", 2.21, [2.1, 2.3]),
        _row("p50_us", "improvement", 0.82, [0.8, 0.84]),
        _row("p99_us", "faster", 0.94, [0.92, 0.97]),
    ]
    md = verdict_text.markdown(Verdict.from_json(_doc("regression", rows)))
    assert "Two views disagree on latency-1c/hft:** its latency reads faster (P50 -18.0%, P99 -6.0%)" in md
    assert "server CPU per order is +121.0%" in md
    calm = [
        _row("cpu_us_per_order", "no_change", 1.0, [0.99, 1.01]),
        _row("p50_us", "improvement", 0.8, [0.78, 0.82]),
    ]
    assert "disagree" not in verdict_text.markdown(Verdict.from_json(_doc("improvement", calm)))


def test_a_reported_only_row_beyond_its_threshold_is_a_warning_and_reaches_main_s_issue():
    """Significant and +86 %, but reported only: the check passes, the headline warns, and on
    main it opens the regression issue (its key in the marker)."""
    reported = _row("p99_us", "regression", 1.86, [1.6, 2.1], gated=False, client="rust")
    rows = [_row("p50_us", "no_change", 1.0, [0.99, 1.01]), reported]
    doc = _doc("no_change", rows)
    line = verdict_text.headline(Verdict.from_json(doc))
    assert line.startswith("✅ No change") and line.endswith(
        " · ⚠️ reported only, beyond its threshold: latency-1c/rust P99 +86.0%"
    )
    action = regression_issue.issue_action(Verdict.from_json(doc), None)
    assert action.kind == "open" and action.title.startswith(
        f"Reported-only regression on main at {SHA_HEAD[:10]}"
    )
    assert regression_issue.parse_marker(action.body) == ("pr", ["latency-1c/rust:p99_us"])


def test_an_undecided_row_beyond_its_threshold_says_it_fails_and_invalid_says_why():
    beyond = _doc("inconclusive", [_row("p99_us", "inconclusive", 1.12, [1.02, 1.23], settle_runs=40)])
    assert verdict_text.headline(Verdict.from_json(beyond)) == (
        "🟡 Inconclusive: 1 of 1 gated series × metrics undecided; about 40 runs a side would settle it; "
        "fails: the estimate is beyond the threshold (latency-1c/hft P99 +12.0%)"
    )
    failed = _row("errors", "invalid", 1.0, None, reason="base failed: 3 of 9,000 orders on base (timeout 3)")
    invalid = _doc("invalid", [failed, _row("p99_us", "no_change", 1.0, [0.97, 1.03])])
    assert verdict_text.headline(Verdict.from_json(invalid)) == (
        "⛔ Invalid: latency-1c/hft: base failed: 3 of 9,000 orders on base (timeout 3)"
    )
    unjudged = _doc("invalid", [], unjudged=["load/hft: no gated row was judged (n too small)"])
    assert (
        verdict_text.headline(Verdict.from_json(unjudged))
        == "⛔ Invalid: load/hft: no gated row was judged (n too small)"
    )
