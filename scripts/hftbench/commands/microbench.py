"""`hftbench microbench OUT`: the microbenchmarks of a push to main (bench.yml's micro-bench
job), in the formats github-action-benchmark reads: criterion (bencher text, criterion.txt), go
test -bench (go.txt), pytest-benchmark JSON (pytest.json). A language without benchmarks
writes no file.

MICRO_SUITES (bench.yml: the repository variable) names some of "criterion go pytest"; unset or
empty: all three (the act tests run "go": criterion's cargo bench compiles for minutes). A name
it does not know is refused before anything is built or measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..errors import UsageError
from .base import Command

SUITES = ("criterion", "go", "pytest")


def suites_of(value: str) -> list[str]:
    """MICRO_SUITES as a list, or UsageError naming the one it does not know."""
    names = value.split() or list(SUITES)
    for name in names:
        if name not in SUITES:
            raise UsageError(
                f"MICRO_SUITES names criterion, go or pytest, space-separated (got '{name}' in "
                f"'{value}'); none turns micro-bench off in bench.yml"
            )
    return names


def tee(cmd: list[str], cwd: Path, path: Path) -> None:
    """Run `cmd`, its output shown and kept in `path`; its failure is the step's."""
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        raise UsageError(f"{' '.join(cmd)} failed (exit {proc.returncode}); see its output above")
    path.write_text(proc.stdout)


class MicrobenchCommand(Command):
    name = "microbench"
    help = "CI: the microbenchmarks (criterion, go test -bench, pytest-benchmark) for the charts"

    @classmethod
    def add_arguments(cls, p) -> None:
        p.add_argument("out", type=Path, help="folder for criterion.txt, go.txt, pytest.json")

    def run(self) -> int:
        suites = suites_of(os.environ.get("MICRO_SUITES", ""))
        root, out = self.root, self.args.out.absolute()
        out.mkdir(parents=True, exist_ok=True)
        if "criterion" in suites and list((root / "server" / "benches").glob("*.rs")):
            cargo = [
                "cargo",
                "bench",
                "--locked",
                "-p",
                "hft-server",
                "--quiet",
                "--",
                "--output-format",
                "bencher",
            ]
            tee(cargo, root, out / "criterion.txt")
        if "go" in suites and (root / "clients" / "go" / "go.mod").is_file():
            tee(
                ["go", "test", "-run", "^$", "-bench", ".", "-benchmem", "./..."],
                root / "clients" / "go",
                out / "go.txt",
            )
        if "pytest" in suites:
            json_out = f"--benchmark-json={out / 'pytest.json'}"
            pytest = [
                str(root / ".venv" / "bin" / "pytest"),
                "-q",
                "--benchmark-enable",
                "--benchmark-only",
                json_out,
            ]
            code = subprocess.run(pytest, cwd=root).returncode
            if code == 5:  # no benchmark collected
                (out / "pytest.json").unlink(missing_ok=True)
            elif code != 0:
                raise UsageError(f"pytest benchmarks failed (exit {code})")
        for f in sorted(out.iterdir()):
            print(f"{f.name}  {f.stat().st_size} bytes", file=sys.stderr)
        return 0
