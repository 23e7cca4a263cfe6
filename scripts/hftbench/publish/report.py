"""`hftbench report RUN_DIR`: report.md (seed 002's targets-vs-actual tables, seed 004's
cross-client table), results.csv and plots/*.png. `render()` is pure: run in, markdown out."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import metrics, roster, samples
from ..config import FLOOR
from ..fsio import write_atomic
from ..measure.lateness import FELL_BEHIND_SHARE
from ..metrics import fmt_rate, fmt_us
from ..results import Run, load_run, previous_run
from . import report_net
from .csvout import write_csv
from .rows import OPEN_LOOP_KEEP_UP, Row, busy_poll_note, check_targets, fell_behind_note, rows_of

COLUMNS = tuple(m.key for m in metrics.REPORT_COLUMNS)  # "p50", "p90", "p99", "p999"


BUSY_POLL_TRADE = (
    "client hft busy-polls (spins on its sockets instead of sleeping in epoll) when its workers leave "
    "a CPU free, and each hft row says whether it did (`extra.busy_poll`). The trade: spinning lowers "
    "P50 (28 µs against 63 µs at one connection, unpinned, on a 2-core VM), but a spinning client "
    "takes a CPU from the server, so the tail can grow (P99.9 3.7 ms against 129 µs in that "
    "measurement). Compare hft rows only with hft rows that polled the same way."
)


def _scenario_line(run: Run, name: str) -> str:
    sc = run.scenarios.get(name, {})
    # A results.json without the scenario's settings (written by hand, or older) still reports.
    orders = f"{sc['orders']:,}" if isinstance(sc.get("orders"), int) else "?"
    size = f"{sc['duration_s']:g} s" if sc.get("duration_s") else f"{orders} orders"
    loop = f"open loop at {sc['rate']:,.0f} orders/s" if sc.get("rate") else "closed loop"
    desc = f" — {sc['description']}" if sc.get("description") else ""
    conns = sc.get("connections", "?")
    plural = "" if conns == 1 else "s"
    warmup = f"{sc.get('warmup', 0):,}" if isinstance(sc.get("warmup", 0), int) else "?"
    return f"{size}, {conns} connection{plural}, {warmup} warm-up, {loop}{desc}"


def _pct_cell(row: Row, key: str) -> str:
    if not row.has_numbers:
        return "–"
    value = row.percentile(key)
    return fmt_us(value) if value is not None else "n/a¹"


def _times(x: float) -> str:
    return f"{x:,.0f}×" if x >= 100 else f"{x:.3g}×"


def _targets_line(targets: dict[str, float]) -> str:
    parts = []
    for key, bound in targets.items():
        if key == "throughput_rps":
            parts.append(
                f"throughput > {bound:,.0f} orders/s "
                f"(open loop: > {OPEN_LOOP_KEEP_UP:.0%} of the offered rate)"
            )
        else:
            parts.append(f"{metrics.label(key)} < {fmt_us(bound)}")
    return ", ".join(parts)


def _target_row(targets: dict[str, float], open_loop: bool, floor: bool) -> str:
    t = {k: f"< {fmt_us(v)}" for k, v in targets.items() if k.endswith("_us")}
    rate = f"> {fmt_rate(targets['throughput_rps'])}" if "throughput_rps" in targets else ""
    if rate and open_loop:
        rate = f"> {OPEN_LOOP_KEEP_UP:.0%} of the rate"
    cells = ["**target**", rate]
    cells += [t.get(f"{k}_us", "") for k in COLUMNS] + [t.get("max_us", ""), ""]
    cells += [""] * (2 * open_loop + floor) + [""]
    return "| " + " | ".join(cells) + " |"


def scenario_table(
    run: Run, rows: list[Row], floor: Row | None, reference: bool = False, targets_apply: bool = True
) -> list[str]:
    """targets_apply False: a network scenario, where seed 000's loopback targets do not apply."""
    open_loop = any(r.mode == "open" for r in rows)
    show_floor = floor is not None and floor.percentile("p50") is not None
    head = ["client", "orders/s", *(metrics.label(k) for k in COLUMNS), "max", "jitter (σ)"]
    head += ["P99 uncorrected", "send lateness P99"] * open_loop + ["P50 ÷ floor"] * show_floor + ["status"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    targets = {} if reference or not targets_apply else run.targets
    if targets:
        lines.append(_target_row(targets, open_loop, show_floor))
    for row in rows:
        passed, notes = check_targets(row, targets)
        if reference and row.ok:
            notes = ["reference, not judged"]
        notes = list(dict.fromkeys(notes))  # repeats often fail the same way
        notes += [n for n in (fell_behind_note(row), busy_poll_note(row)) if n]
        status = ("✅" if passed else "❌") + (f" {'; '.join(notes)}" if notes else "")
        cells = [row.client, fmt_rate(row.throughput_rps), *(_pct_cell(row, k) for k in COLUMNS)]
        cells += [fmt_us(row.max_us), fmt_us(row.stddev_us)]
        if open_loop:
            cells += [fmt_us(row.uncorrected_p99_us), fmt_us(row.lateness_p99_us)]
        if show_floor:
            p50, base = row.percentile("p50"), floor.percentile("p50") if floor else None
            cells.append(_times(p50 / base) if p50 and base else "–")
        cells.append(status.replace("|", "/"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def cross_client_table(by_scenario: dict[str, list[Row]]) -> list[str]:
    """Seed 004's table: clients as rows, throughput / mean / P99 / max per scenario."""
    scenarios = [s for s in by_scenario if s != FLOOR]
    clients = list(dict.fromkeys(r.client for s in scenarios for r in by_scenario[s]))
    head = ["client", *(f"{s}: orders/s · mean · P99 · max" for s in scenarios)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for client in clients:
        cells = [client]
        for s in scenarios:
            row = next((r for r in by_scenario[s] if r.client == client), None)
            if row is None or not row.has_numbers:
                poll = busy_poll_note(row) if row is not None else None
                cells.append(("❌" + (f" {poll}" if poll else "")) if row is not None else "–")
                continue
            poll = busy_poll_note(row)
            mark = (f" · {poll}" if poll else "") + ("" if row.ok else " ❌")
            cells.append(
                f"{fmt_rate(row.throughput_rps)} · {fmt_us(row.mean_us)} · "
                f"{_pct_cell(row, 'p99')} · {fmt_us(row.max_us)}{mark}"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def comparison_table(run: Run, prev: Run) -> list[str]:
    """Ratios this / previous for cells ok in both runs (no statistics: see `hftbench compare`)."""
    now, before = rows_of(run), rows_of(prev)
    lines = [
        "| scenario | client | orders/s ratio | P50 ratio | P99 ratio | P99 (previous → now) |",
        "|---|---|---|---|---|---|",
    ]
    count = 0
    for scenario, rows in now.items():
        for row in rows:
            old = next((r for r in before.get(scenario, []) if r.client == row.client), None)
            if old is None or not (row.ok and old.ok and row.has_numbers and old.has_numbers):
                continue

            def ratio(a: float | None, b: float | None) -> str:
                return f"{a / b:.3g}" if a and b else "n/a"

            p99 = (
                f"{fmt_us(old.percentile('p99'))} → {fmt_us(row.percentile('p99'))}"
                if row.percentile("p99") and old.percentile("p99")
                else "n/a¹"
            )
            polls = (busy_poll_note(old), busy_poll_note(row))
            poll = " → ".join(dict.fromkeys(p or "?" for p in polls))
            shown = row.client + (f" ({poll})" if any(polls) else "")
            lines.append(
                f"| {scenario} | {shown} | {ratio(row.throughput_rps, old.throughput_rps)} | "
                f"{ratio(row.percentile('p50'), old.percentile('p50'))} | "
                f"{ratio(row.percentile('p99'), old.percentile('p99'))} | {p99} |"
            )
            count += 1
    return lines if count else ["No scenario × client ran cleanly in both runs."]


def _placement_text(placement: dict | None) -> str:
    if not placement:
        return "not pinned (the scheduler placed the server and the clients)"
    parts = [
        f"{who} on CPUs {placement[key]}"
        for who, key in (("server", "server_cpus"), ("clients", "client_cpus"))
        if placement.get(key)
    ]
    return ", ".join(parts)


def host_lines(run: Run) -> list[str]:
    fp = run.fingerprint
    lines = [
        f"- CPU: {fp.get('cpu_model')} · {fp.get('cores')} cores · {fp.get('memory_gib')} GiB · "
        f"{fp.get('os')} · kernel {fp.get('kernel')} · virtualization: {fp.get('virtualization') or 'none'}",
        f"- load average at start: {fp.get('load_avg')}",
        "- placement: " + _placement_text(fp.get("placement")),
    ]
    tuning = fp.get("tuning") or {}
    knobs = tuning.get("knobs") or {}
    if knobs:
        not_tuned = [k for k, v in knobs.items() if v.get("status") == "not tuned"]
        verdict = "tuned" if not not_tuned else f"**not tuned** ({', '.join(not_tuned)})"
        lines.append(f"- tuning ({tuning.get('source', '?')}): {verdict}")
        lines.append("")
        lines.append("| knob | value | recommended | status |")
        lines.append("|---|---|---|---|")
        for name, knob in knobs.items():
            lines.append(
                f"| {name} | {knob.get('value')} | {knob.get('recommended', '')} | {knob.get('status', '')} |"
            )
    g = run.git
    dirty = " (dirty)" if g.get("dirty") else ""
    lines += [
        "",
        f"- git: `{(g.get('commit') or '?')[:12]}` on {g.get('branch')}{dirty}: "
        f"{g.get('message')} ({g.get('author')})",
        "- tools: " + ", ".join(f"{k} {v}" for k, v in run.tools.items() if v),
        f"- server: `{run.server.get('binary')}` {run.server.get('version') or ''} "
        f"flags {run.server.get('flags') or '[]'} sha256 {str(run.server.get('sha256'))[:12]}",
    ]
    return lines


def render(
    run: Run, previous: Run | None = None, plots: list[Path] | None = None, soak: list[str] | None = None
) -> str:
    """report.md; `soak` is the soak section (soak_report.markdown), placed after the targets."""
    by_scenario = rows_of(run)
    floor_rows = by_scenario.get(FLOOR, [])
    floor = floor_rows[0] if floor_rows else None
    failed = run.failed
    ok_count = len(run.cells) - len(failed)
    out = [
        f"# hft-bench report: {run.run_id}",
        "",
        f"Suite **{run.suite}** · {run.started_at} → {run.finished_at or 'unfinished'}"
        f" · git `{(run.git.get('commit') or '?')[:8]}`{' (dirty)' if run.git.get('dirty') else ''}"
        f" · {run.fingerprint.get('cores')} cores, {run.fingerprint.get('cpu_model')}",
        "",
        f"**{ok_count} of {len(run.cells)} cells ✅**"
        + (f", {len(failed)} ❌" if failed else "")
        + ("" if run.complete else " — **the run did not finish; this report covers what it measured**")
        + (f" · repeats: {run.repeats}" if run.repeats > 1 else ""),
        "",
        f"Acceptance targets (seed 000): {_targets_line(run.targets)}.",
        "",
        "## Targets vs actual",
        "",
        "Latency = request start to response fully read, from the merged HdrHistogram; jitter = standard "
        "deviation. Open loop: corrected for coordinated omission (the uncorrected P99 beside it), "
        "and the send lateness P99 (actual send − intended send: how late the client itself sent); "
        f"a row whose send lateness P99 exceeds {FELL_BEHIND_SHARE:.0%} of the interval between one "
        "connection's intended sends (connections ÷ rate) says its generator fell behind: its corrected "
        "latency then holds the client's own delay, not only the server's.",
    ]
    none_floor = next((r for r in by_scenario.get("net-none", []) if r.client == FLOOR), None)
    for scenario, rows in by_scenario.items():
        if scenario == FLOOR:
            continue
        out += ["", f"### {scenario}", "", _scenario_line(run, scenario), ""]
        if report_net.is_network(run, scenario):  # judged against its own path's floor, shown apart
            path_floor = next((r for r in rows if r.client == FLOOR), None)
            out += scenario_table(
                run, [r for r in rows if r.client != FLOOR], path_floor, targets_apply=False
            )
            out += report_net.network_table(run, scenario, rows, floor, none_floor)
            continue
        out += scenario_table(run, rows, floor)
    if floor is not None:
        out += ["", "### floor (reference)", "", _scenario_line(run, FLOOR), ""]
        out += scenario_table(run, floor_rows, None, reference=True)
    out += soak or []
    out += ["", "## Client comparison", "", *cross_client_table(by_scenario)]
    out += [
        "",
        "## How this was measured",
        "",
        "One hft-server (`--addr 127.0.0.1:0`) for the whole run; before each cell its statistics are "
        "reset, and after it `/stats` must count exactly the client's warm-up + measured orders (an "
        "order it never saw is lost and fails the cell). Each client sends its warm-up orders first "
        "(not recorded), then the measured ones; every worker records into its own HdrHistogram "
        "(ns, 3 significant digits), merged after the run. Closed loop: each connection sends its "
        "next order when the answer arrived. Open loop: orders have intended send times and latency "
        "counts from them (coordinated omission corrected). A cell fails on a crash, a timeout, a "
        "result that does not validate against the schema, or any failed order. The floor is a raw "
        "loopback TCP ping-pong (bin/hft-floor): no HTTP, no JSON, no matching engine."
        + (
            f" Each cell ran {run.repeats} times, clients rotated between repeats; percentiles "
            "come from the pooled histograms, throughput is all successful orders over all measured "
            'seconds (as in results.csv\'s "all" rows, the GAB export, the history and the gate).'
            if run.repeats > 1
            else ""
        ),
    ]
    if set(run.client_names()) & set(roster.default().having("pins_threads")):
        out += ["", BUSY_POLL_TRADE]
    out += [
        "",
        "## Samples and percentiles",
        "",
        f"¹ A percentile is shown only with ≥ {samples.DISPLAY_MIN_BEYOND} samples beyond it: P50 needs "
        f"{samples.min_samples(50):,}, P90 {samples.min_samples(90):,}, P99 {samples.min_samples(99):,}, "
        f"P99.9 {samples.min_samples(99.9):,} samples. A target on a percentile not shown is not judged. "
        f"Regression gates use a stricter rule (≥ {samples.GATE_MIN_BEYOND} beyond: P99 needs "
        f"{samples.min_samples(99, samples.GATE_MIN_BEYOND):,}, P99.9 "
        f"{samples.min_samples(99.9, samples.GATE_MIN_BEYOND):,}).",
    ]
    if failed or run.skipped:
        out += ["", "## Failures", ""]
        for c in failed:
            rep = f" r{c.repeat}" if run.repeats > 1 else ""
            out.append(f"- ❌ {c.scenario}/{c.client}{rep}: {c.reason}")
        out += [f"- skipped {s['client']}: {s['reason']}" for s in run.skipped]
    if plots:
        out += ["", "## Plots", ""]
        out += [f"![{p.stem}](plots/{p.name})" for p in plots]
    out += ["", "## Host", "", *host_lines(run)]
    client_s = sum(c.wall_s or 0.0 for c in run.cells)
    if run.wall_s:
        overhead = run.wall_s - client_s
        out += [
            "",
            f"Run wall time {run.wall_s:,.1f} s; clients {client_s:,.1f} s; orchestration "
            f"(server start, fingerprint, stats checks, writing) {overhead:,.1f} s = "
            f"{100 * overhead / run.wall_s:.1f} %.",
        ]
    if previous is not None:
        out += [
            "",
            f"## Compared with the previous run ({previous.run_id})",
            "",
            "Ratios now / previous (orders/s: higher is better; latency: lower is better). Runs on "
            "different days on a shared machine differ by noise alone; `hftbench compare` gives the verdict.",
            "",
            *comparison_table(run, previous),
        ]
    return "\n".join(out) + "\n"


def write_all(run: Run, previous: Path | None | bool = True, gates: Path | None = None) -> Path:
    """report.md, results.csv and plots/ into the run folder; `previous` True = find it;
    `gates`: the gates file a soak's drift is judged by (default bench-config/gates.yaml)."""
    from ..judge.gates import load_gates
    from .plots import write_plots
    from .soak_plots import write_soak_plots
    from .soak_report import analyze, markdown

    plots = write_plots(run)
    soaks = analyze(run, load_gates(gates))
    soak_plots = write_soak_plots(soaks, run.path / "plots") if soaks else {}
    write_csv(run)
    prev_run = None
    prev_path = previous_run(run.path, suite=run.suite) if previous is True else (previous or None)
    if prev_path:
        try:
            prev_run = load_run(prev_path)
        except (OSError, ValueError) as exc:
            print(
                f"hftbench report: previous run {prev_path} unreadable ({exc}); no comparison",
                file=sys.stderr,
            )
    path = run.path / "report.md"
    write_atomic(path, render(run, prev_run, plots, markdown(soaks, soak_plots)))
    return path
