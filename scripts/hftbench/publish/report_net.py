"""The network scenarios' part of report.md: latency over the link against that path's floor.

A network scenario's floor (bin/hft-floor through the same veths and emulator with nothing
added) is the floor of its path; the emulator's stats of each cell say what round trip it
added. A client's own cost over the link is then its P50 minus floor and link, and the
emulator's own cost is the path's floor minus the veth-only (`none`) or the loopback floor.
Pure: rows and cells in, markdown lines out.
"""

from __future__ import annotations

import statistics

from .. import metrics
from ..config import FLOOR
from ..measure.netpath import round_trip_added_us
from ..metrics import fmt_us
from ..results import Run
from ..results_shapes import LinkRecord
from .rows import Row, busy_poll_note


def is_network(run: Run, scenario: str) -> bool:
    return bool(run.scenarios.get(scenario, {}).get("link"))


def _profile_line(run: Run, scenario: str) -> str:
    sc = run.scenarios.get(scenario, {})
    p: LinkRecord = sc.get("link_profile") or {}
    if not p:
        return f"link `{sc.get('link')}`"
    if not p.get("emulate", True):
        return f"link `{sc.get('link')}`: veth pair only, no emulator"
    return (
        f"link `{sc.get('link')}`: {p.get('delay_us', 0):g} µs ± {p.get('jitter_us', 0):g} one way, "
        f"{p.get('loss_pct', 0):g} % loss per frame, through bin/hft-linkem"
    )


def _added_rtt(run: Run, scenario: str, client: str, key: str = "p50") -> float | None:
    values = [round_trip_added_us(c.link, key) for c in run.select(scenario=scenario, client=client)]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _lost(run: Run, scenario: str) -> int:
    return sum(
        int((c.link or {}).get(d, {}).get("lost", 0))
        for c in run.select(scenario=scenario)
        for d in ("a_to_b", "b_to_a")
    )


def network_table(
    run: Run, scenario: str, rows: list[Row], loopback_floor: Row | None, none_floor: Row | None
):
    """Lines for one network scenario: profile, path floor, per client against it."""
    floor = next((r for r in rows if r.client == FLOOR), None)
    floor_p50 = floor.percentile("p50") if floor else None
    lost = _lost(run, scenario)
    intro = (
        f"Over the {_profile_line(run, scenario)} (seed 000's loopback targets are not judged here). "
        "Path floor = bin/hft-floor over the same path with "
        f"nothing added (P50 {fmt_us(floor_p50)}); link = the round trip the emulator applied (its own "
        "P50 per direction, summed)" + (f"; frames it dropped: {lost}" if lost else "") + "."
    )
    out = ["", intro, ""]
    emulated = (run.scenarios.get(scenario, {}).get("link_profile") or {}).get("emulate", True)
    if floor_p50 is not None:
        base = [("veth only (net-none floor)", none_floor), ("loopback floor", loopback_floor)]
        for label, ref in base:
            ref_p50 = ref.percentile("p50") if ref and ref is not floor else None
            if ref_p50 is not None:
                what = "Emulator's own cost" if emulated else "The veth path's own cost"
                out += [
                    f"{what}: path floor P50 {fmt_us(floor_p50)} − {label} P50 "
                    f"{fmt_us(ref_p50)} = {floor_p50 - ref_p50:+.1f} µs per round trip.",
                    "",
                ]
                break
    shown = (metrics.P50, metrics.P99, metrics.P999)
    head = [
        "client",
        *(m.label for m in shown),
        "link added (P50)",
        "P50 − floor − link",
        "P50 ÷ (floor + link)",
    ]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        if row.client == FLOOR or not row.has_numbers:
            continue
        p50 = row.percentile("p50")
        link = _added_rtt(run, scenario, row.client)
        poll = busy_poll_note(row)  # client hft: whether it busy-polled (report.py says why it matters)
        cells = [row.client + (f" ({poll})" if poll else ""), *(fmt_us(row.percentile(m.key)) for m in shown)]
        cells.append(fmt_us(link) if link is not None else "0 (no emulator)")
        if p50 is not None and floor_p50 is not None:
            expected = floor_p50 + (link or 0.0)
            cells += [f"{p50 - expected:+.1f} µs", f"{p50 / expected:.3g}×"]
        else:
            cells += ["–", "–"]
        out.append("| " + " | ".join(cells) + " |")
    return out
