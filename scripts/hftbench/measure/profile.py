"""A differential profile of head against base: where the added time went.

After ab's counted rounds, one extra round of each side runs with its server under
`perf record` (a software `cpu-clock` event: this needs no hardware counters, which the
KVM development VM and many CI runners lack; the in-process pprof crate would need the
feature in the *base* commit too, and an old base has no such flag). perf samples the
server's threads at FREQUENCY_HZ with DWARF unwinding (release builds keep .eh_frame,
frame pointers are omitted). Then, with the inferno tools:

    perf script | inferno-collapse-perf     -> <out>/profile/{base,head}.folded
    inferno-diff-folded base head | inferno-flamegraph -> <out>/profile/diff.svg

In the SVG each frame is head's stack; red = more samples in head than in base, blue =
fewer. perf script and the inferno tools parse what head's server left (its binary's ELF and
DWARF, its frames' names): untrusted input, so where the head ran sandboxed they run in the
sandbox too (sandbox.wrap: no network, nothing writable, the output folder hidden but the
profile's own files and the served binaries bound back read-only). perf record itself stays
outside (perf_event_open is the harness's, refused in the sandbox); at its end it reads the
build-id notes of the binaries it sampled, and keeps them and the vDSO (whose symbols exist
nowhere else) in the profile's own build-id cache (`--buildid-dir`), which perf script reads.
The verdict's table (top_added) is the 5 functions whose *self* time (samples where the
function is the leaf) grew most, as a share of each side's samples.

Zero overhead on the counted rounds: they run the plain binary with no profiler attached
(no perf process, no timer, no signal); the profiled rounds run after them, in their own
run folders under <out>/profile/ that the statistics never read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median

from .. import paths
from ..profile_record import ProfileRecord, TopFunction
from . import sandbox
from .rig import Rig, RoundError
from .served import Served
from .server import real_binary

FREQUENCY_HZ = 4999  # odd, so sampling does not lock step with a periodic timer in the server
STACK_BYTES = 16384  # user stack copied per sample for DWARF unwinding
TOOLS = ("perf", "inferno-collapse-perf", "inferno-diff-folded", "inferno-flamegraph")
TOP = 5


def tool(name: str, root: Path | None = None) -> str | None:
    """A tool's path: make deps puts inferno's binaries in .deps/bin, perf comes from apt."""
    local = (root or paths.repo_root()) / ".deps" / "bin" / name
    return str(local) if os.access(local, os.X_OK) else shutil.which(name)


def event() -> str:
    """cpu-clock, or user space only where the kernel refuses kernel samples to non-root."""
    try:
        paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except (OSError, ValueError):
        paranoid = 2
    return "cpu-clock" if os.geteuid() == 0 or paranoid <= 1 else "cpu-clock:u"


def unavailable(root: Path | None = None) -> str | None:
    """Why no profile can be taken here (a missing tool, perf refused), or None."""
    missing = [t for t in TOOLS if tool(t, root) is None]
    if missing:
        return f"{', '.join(missing)} not found: run `make deps` (perf from apt, inferno from crates.io)"
    probe = subprocess.run(
        [tool("perf", root), "record", "-e", event(), "-q", "-o", "/dev/null", "--", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"perf record cannot sample here ({why}); see /proc/sys/kernel/perf_event_paranoid"
    return None


def wrap_server(real: Path, wrapper: Path, data: Path, root: Path | None = None) -> None:
    """`wrapper` runs `real` under perf record when it serves (--listen-fd, or --addr for a
    build from before it); `--version` and `--help` (asked by the orchestrator) run bare, so
    they do not overwrite the profile."""
    perf = tool("perf", root)
    sampling = f"-e {event()} -F {FREQUENCY_HZ} --call-graph dwarf,{STACK_BYTES}"
    cache = data.parent / "buildid"
    record = f'"{perf}" --buildid-dir "{cache}" record {sampling} -q -o "{data}" --'
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(
        "#!/bin/sh\n# hftbench profile: the server under perf record (profiled rounds only)\n"
        f'case " $* " in *" --listen-fd "*|*" --addr "*) exec {record} "{real}" "$@" ;; esac\n'
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)


@dataclass(frozen=True)
class Parsing:
    """Where perf script and inferno run: in the sandbox (`sandboxed`), seeing of the hidden
    output folder `out` only the paths in `readable`."""

    sandboxed: bool = False
    out: Path | None = None
    readable: tuple[Path, ...] = ()

    def command(self, cmd: list[str]) -> list[str]:
        if not self.sandboxed:
            return cmd
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C.UTF-8"}
        hide = (self.out,) if self.out else ()
        # the tool itself where it lies in a hidden folder (make deps links inferno from ~/.cargo)
        tool_path = Path(os.path.realpath(cmd[0]))
        readonly = (*self.readable, tool_path) if tool_path.is_file() else self.readable
        return sandbox.wrap(cmd, writable=(), readonly=readonly, hide=hide, env=env, own_network=True)


def fold(data: Path, folded: Path, root: Path | None = None, parsing: Parsing = Parsing()) -> None:
    """perf.data -> folded stacks ("frame;frame;leaf count" lines)."""
    script = subprocess.run(
        parsing.command(
            [tool("perf", root), "--buildid-dir", str(data.parent / "buildid"), "script", "-i", str(data)]
        ),
        capture_output=True,
        check=False,
    )
    if script.returncode != 0:
        raise ProfileError(f"perf script -i {data} failed: {_tail(script.stderr)}")
    collapsed = subprocess.run(
        parsing.command([tool("inferno-collapse-perf", root)]),
        input=script.stdout,
        capture_output=True,
        check=False,
    )
    if collapsed.returncode != 0:
        raise ProfileError(f"inferno-collapse-perf failed: {_tail(collapsed.stderr)}")
    folded.write_bytes(collapsed.stdout)


def diff_svg(
    base: Path, head: Path, svg: Path, title: str, root: Path | None = None, parsing: Parsing = Parsing()
) -> None:
    """The differential flame graph of head against base (inferno's diff-folded + flamegraph)."""
    diff = subprocess.run(
        parsing.command([tool("inferno-diff-folded", root), str(base), str(head)]),
        capture_output=True,
        check=False,
    )
    if diff.returncode != 0:
        raise ProfileError(f"inferno-diff-folded failed: {_tail(diff.stderr)}")
    graph = subprocess.run(
        parsing.command([tool("inferno-flamegraph", root), "--title", title, "--subtitle", SUBTITLE]),
        input=diff.stdout,
        capture_output=True,
        check=False,
    )
    if graph.returncode != 0 or not graph.stdout:
        raise ProfileError(f"inferno-flamegraph failed: {_tail(graph.stderr)}")
    svg.write_bytes(graph.stdout)


SUBTITLE = "head's stacks; red: more samples than base, blue: fewer (perf cpu-clock, one round a side)"


def _tail(stderr: bytes) -> str:
    return stderr.decode(errors="replace").strip()[-300:] or "no message"


class ProfileError(RuntimeError):
    """A profiling tool failed; the verdict stands, the profile says why it is missing."""


# -- pure: folded stacks -> self time ---------------------------------------------------------


def self_samples(folded: str) -> Counter[str]:
    """Samples per leaf function (its self time) from folded stacks."""
    counts: Counter[str] = Counter()
    for line in folded.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        counts[stack.rsplit(";", 1)[-1]] += int(n)
    return counts


def top_added(base: Counter[str], head: Counter[str], n: int = TOP) -> list[TopFunction]:
    """The `n` functions whose share of self time grew most from base to head, in percent
    of each side's samples (the sides ran the same orders, but shares stay comparable when
    a side's profile caught more or fewer samples)."""
    tb, th = sum(base.values()) or 1, sum(head.values()) or 1
    rows = [
        TopFunction(
            function=fn,
            base_self_pct=round(100 * base[fn] / tb, 2),
            head_self_pct=round(100 * head[fn] / th, 2),
            added_self_pct=round(100 * (head[fn] / th - base[fn] / tb), 2),
        )
        for fn in set(base) | set(head)
    ]
    rows = [r for r in rows if r.added_self_pct > 0]
    rows.sort(key=lambda r: (-r.added_self_pct, r.function))
    return rows[:n]


@dataclass
class Profiled:
    """One side's profiled round: where its folded stacks are, how fast the round ran."""

    side: str
    folded: Path
    cpu_ms: float  # sampled on-CPU time of the server (cpu-clock weighs each sample by its period, ns)
    p50_us: float | None  # the profiled round's P50, beside the counted rounds' (the overhead)


def summary(
    out: Path, sides: dict[str, Profiled], svg: Path, counted_p50_us: dict[str, list[float]]
) -> ProfileRecord:
    """verdict.json's `profile` (paths relative to the ab folder)."""
    base = self_samples(sides["base"].folded.read_text())
    head = self_samples(sides["head"].folded.read_text())
    return ProfileRecord(
        svg=str(svg.relative_to(out)),
        folded={s: str(p.folded.relative_to(out)) for s, p in sides.items()},
        tool=f"perf record -e {event()} -F {FREQUENCY_HZ} --call-graph dwarf; inferno",
        cpu_ms={s: round(p.cpu_ms, 1) for s, p in sides.items()},
        top=top_added(base, head),
        # The profiled round's P50 against the median of the side's counted rounds.
        round_p50_us={
            s: {
                "profiled": p.p50_us,
                "counted_median": median(counted_p50_us[s]) if counted_p50_us.get(s) else None,
            }
            for s, p in sides.items()
        },
    )


# -- the profiled rounds (ab calls this after its counted rounds) -------------------------------


def profile_sides(
    rig: Rig,
    sides: dict[str, Served],
    out: Path,
    title: str,
    counted_p50_us: dict[str, list[float]],
    root: Path | None = None,
    sandboxed: bool = False,
    say: Callable[[str], None] = lambda msg: print(f"hftbench profile: {msg}", file=sys.stderr, flush=True),
) -> ProfileRecord:
    """One profiled round of each of `sides` ("base", "head") by the rig that measured them,
    after the counted ones, into <out>/profile/; the `profile` object (paths relative to
    `out`), or {"skipped": why} when this machine cannot profile or a tool failed (the
    verdict stands). `root`: where make deps put the tools. `sandboxed`: the head ran in the
    sandbox, and what parses its output runs there too (Parsing). `say`: a line of progress, in
    the words of the command that profiles (ab passes its own)."""
    from .cell import link_clients

    why = unavailable(root)
    if why:
        say(f"no profile: {why}")
        return ProfileRecord(skipped=why)
    folder = out / "profile"
    served = tuple(
        real_binary((sides[n].bins / "hft-server").resolve()).resolve().parent for n in ("base", "head")
    )
    parsing = Parsing(sandboxed, out, (folder, *served))
    profiled: dict[str, Profiled] = {}
    wrapped: dict[str, Served] = {}

    def run_dir(name: str) -> Path:
        say(f"profiled round {name} (not counted) …")
        return folder / name / "run"

    try:
        for name in ("base", "head"):  # each side's server under perf record, the clients as they were
            bins = folder / name / "bin"
            wrap_server(
                (sides[name].bins / "hft-server").resolve(),
                bins / "hft-server",
                folder / name / "perf.data",
                root,
            )
            link_clients(sides[name].bins, bins, rig.plan.clients)
            wrapped[name] = replace(sides[name], bins=bins)
        runs = rig.alone(wrapped, run_dir)  # each side alone, base then head, whatever the design
        for name, run in runs.items():
            data = folder / name / "perf.data"
            if not data.is_file():
                raise ProfileError(f"perf wrote no {data}; see {folder / name / 'run' / 'server.log'}")
            folded = folder / f"{name}.folded"
            fold(data, folded, root, parsing)
            # tens of MB of raw stacks and copies of the binaries: the folded file keeps what the graph needs
            data.unlink()
            shutil.rmtree(data.parent / "buildid", ignore_errors=True)
            cpu_ns = sum(self_samples(folded.read_text()).values())
            profiled[name] = Profiled(name, folded, cpu_ns / 1e6, round_p50(run))
        svg = folder / "diff.svg"
        diff_svg(profiled["base"].folded, profiled["head"].folded, svg, title, root, parsing)
    except (ProfileError, RoundError, OSError) as exc:  # the verdict stands without a profile
        say(f"no profile: {exc}")
        return ProfileRecord(skipped=str(exc))
    return summary(out, profiled, svg, counted_p50_us)


def round_p50(run) -> float | None:
    """The P50 of the round's first successful cell (the pr suite has one)."""
    for cell in run.cells:
        if cell.ok and cell.result is not None:
            return cell.result.latency.p50_us
    return None
