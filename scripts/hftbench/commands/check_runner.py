"""`hftbench check-runner`: the host fingerprint and whether it is tuned for benchmarking.

Warnings are advice: a shared, untuned VM still runs benchmarks, but its tail latencies are
noise. `--strict` exits 1 on any warning (for the self-hosted runner's pre-flight check).
"""

from __future__ import annotations

import json
import os
import subprocess

from .. import ci_job
from ..errors import UsageError
from ..measure import fingerprint
from ..measure import placement as placement_mod
from ..measure.fingerprint import stable_fields
from ..results_shapes import Fingerprint
from .base import Command


def placement_warnings(isolated: str | None, placement: placement_mod.Placement) -> list[str]:
    """Advice on where the server and the clients run against the isolated CPUs (pure)."""
    try:
        iso = set(placement_mod.parse_cpu_list(str(isolated), "isolcpus")) if isolated else set()
    except UsageError:  # "none", "unavailable"
        iso = set()
    out = []
    if iso and not placement.server:
        out.append(
            f"CPUs {placement_mod.format_cpu_list(sorted(iso))} are isolated but nothing is pinned there: "
            f"set {placement_mod.ENV_SERVER} (hft/runner/README.md)"
        )
    on_isolated = placement_mod.format_cpu_list(sorted(iso & set(placement.clients)))
    if on_isolated:
        out.append(
            f"{placement_mod.ENV_CLIENT} includes isolated CPUs {on_isolated}: "
            "the kernel does not spread a client's threads over those; "
            "give the clients CPUs that are not isolated"
        )
    shared = sorted(set(placement.server) & set(placement.clients))
    if shared:
        out.append(
            f"the server and the clients share CPUs {placement_mod.format_cpu_list(shared)}: "
            "client work shows up as server latency"
        )
    return out


def warnings_for(fp: Fingerprint) -> list[str]:
    """Advice for a benchmark host (pure: from a fingerprint dict)."""
    out = []
    cores = fp.get("cores") or 0
    if cores and cores < 4:
        out.append(
            f"only {cores} cores: server and clients share CPUs, so client scheduling shows up as latency"
        )
    load = fp.get("load_avg") or []
    if load and cores and load[0] > 0.5 * cores:
        out.append(f"load average {load[0]} on {cores} cores: other work is running; results will be noisy")
    if fp.get("virtualization"):
        out.append(f"virtual machine ({fp['virtualization']}): steal time and a shared host add jitter")
    tuning = fp.get("tuning") or {}
    knobs = tuning.get("knobs") or {}
    if "setup_hft_system.sh" not in str(tuning.get("source", "")) or "missing" in str(
        tuning.get("source", "")
    ):
        out.append("hft/scripts/setup_hft_system.sh not available: tuning only partly checked")
    for name, knob in knobs.items():
        if knob.get("status") == "not tuned":
            fix = "kernel command line" if knob.get("kind") == "boot" else "setup_hft_system.sh --apply"
            out.append(f"{name} = {knob.get('value')} (recommended {knob.get('recommended')}; {fix})")
    return out


TUNING_UNIT = "hft-tuning.service"  # hft/runner/install-runner.sh's boot-time tuning


def tuning_unit_warnings(state: str | None) -> list[str]:
    """The runner starts even when the tuning unit failed (it only Wants= it): say so here,
    where every bench.yml job looks (pure: from `systemctl is-failed`'s answer)."""
    if state != "failed":
        return []
    return [
        f"{TUNING_UNIT} failed at boot: run-time tunings may be missing; see "
        f"`journalctl -u {TUNING_UNIT}`, fix it, then `systemctl restart {TUNING_UNIT}`"
    ]


def _tuning_unit_state() -> str | None:
    """'failed', 'active', 'inactive' (also: no such unit), or None without systemd."""
    try:
        out = subprocess.run(
            ["systemctl", "is-failed", TUNING_UNIT], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


class CheckRunnerCommand(Command):
    name = "check-runner"
    help = "print the host fingerprint and whether the host is tuned for benchmarking"
    description = "Print the host fingerprint, the tuning check and warnings for benchmarking."

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument(
            "--json", action="store_true", help="print {fingerprint, git, tools, warnings} as JSON"
        )
        p.add_argument("--strict", action="store_true", help="exit 1 when there is any warning")
        p.add_argument(
            "--ci",
            action="store_true",
            help="a benchmark job's check (bench.yml): a warning fails it, said in the step summary; "
            "ALLOW_UNTUNED=true (a run by hand's input) records it there and goes on",
        )

    def run(self) -> int:
        args, root = self.args, self.root
        fp = fingerprint.host(root)
        placement = placement_mod.resolve(None, None)
        fp["placement"] = placement.describe()
        isolated = stable_fields(fp)["isolcpus"]
        warns = warnings_for(fp) + placement_warnings(isolated, placement)
        warns += tuning_unit_warnings(_tuning_unit_state())
        if args.json:
            doc = {
                "fingerprint": fp,
                "git": fingerprint.git_info(root),
                "tools": fingerprint.tools(),
                "warnings": warns,
            }
            print(json.dumps(doc, indent=2))
        else:
            self.print_text(fp, isolated, warns)
        if args.ci:
            return self.job_check(warns)
        return 1 if (args.strict and warns) else 0

    def job_check(self, warns: list[str]) -> int:
        """A benchmark job's first step: an untuned runner fails the job with the reasons, in the
        step summary too, unless the run by hand allowed it (ALLOW_UNTUNED=true)."""
        if not warns:
            self.say("runner is tuned")
            return 0
        lines = "\n".join(f"warning   {w}" for w in warns)
        ci_job.summary(f"### Runner check failed\n\n```\n{lines}\n```\n")
        if os.environ.get("ALLOW_UNTUNED") == "true":
            self.say(
                "runner is not tuned; going on because ALLOW_UNTUNED=true: figures are not comparable with "
                "the history"
            )
            return 0
        raise UsageError(
            "runner is not tuned (the warnings above); fix it with 'sudo hft/scripts/setup_hft_system.sh "
            "--apply' or start the run with allow_untuned"
        )

    @staticmethod
    def print_text(fp: Fingerprint, isolated: str | None, warns: list[str]) -> None:
        """The fingerprint, the tuning check and the warnings, one line each."""
        print(f"host      {fp['hostname']}: {fp['cpu_model']}, {fp['cores']} cores, {fp['memory_gib']} GiB")
        print(f"system    {fp['os']}, kernel {fp['kernel']}, virtualization {fp['virtualization'] or 'none'}")
        print(f"load      {fp['load_avg']}")
        where = ", ".join(f"{k} {v}" for k, v in fp["placement"].items()) or "not pinned"
        print(f"placement {where} (isolated CPUs: {isolated})")
        tuning = fp["tuning"]
        print(f"tuning    from {tuning.get('source')}")
        for name, knob in (tuning.get("knobs") or {}).items():
            rec = f" (recommended {knob['recommended']})" if knob.get("recommended") else ""
            print(f"  {name:<15} {knob.get('value'):<16} {knob.get('status', ''):<12}{rec}")
        print("verdict   " + ("tuned for benchmarking" if not warns else f"NOT tuned: {len(warns)} warnings"))
        for w in warns:
            print(f"warning   {w}")
