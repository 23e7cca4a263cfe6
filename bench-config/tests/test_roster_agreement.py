"""The client roster (clients.yaml) against the places that cannot read it: the result
schema's `client` pattern (JSON read by every client's own tests, so kept static: it admits
every roster name and the floor, and hftbench checks a result names the client it ran) and
the Makefile (make reads no YAML). Each failure names the client and the fix."""

import json
import re
from pathlib import Path

import pytest
from hftbench import roster as roster_mod

CONFIG = Path(__file__).resolve().parents[1]
REPO = CONFIG.parent
ROSTER = roster_mod.load(CONFIG / "clients.yaml")
FLOOR = "floor"  # bin/hft-floor's rows: in the schema, not in the roster (clients.yaml says why)


def test_every_client_has_its_folder():
    missing = [f"{c.name}: {c.folder}" for c in ROSTER.clients if not (REPO / c.folder).is_dir()]
    assert not missing, f"clients.yaml names folders that do not exist: {missing}"


def test_result_schema_admits_every_roster_client_and_the_floor():
    schema_path = CONFIG / "schema" / "result.schema.json"
    client = json.loads(schema_path.read_text())["properties"]["client"]
    assert "enum" not in client, f"{schema_path}: properties.client lists names; the roster is their one list"
    refused = [n for n in (*ROSTER.names, FLOOR) if not re.fullmatch(client["pattern"], n)]
    assert not refused, f"{schema_path}: properties.client.pattern refuses {refused} (in {ROSTER.path})"


# --- the Makefile --------------------------------------------------------------------------

_HAVE = re.compile(r"^HAVE_([A-Z0-9]+)_CLIENT\s*:=\s*\$\(wildcard ([^)\s]+)\)", re.M)


def makefile_targets(text: str) -> dict[str, str]:
    """target -> its recipe (the tab-indented lines after `target:`), continuation lines joined."""
    text = text.replace("\\\n", " ")
    targets: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            targets[current] += line + "\n"
            continue
        match = re.match(r"^([A-Za-z0-9_.-]+)\s*:(?!=)(.*)$", line)
        current = match.group(1) if match else None
        if current is not None:
            targets[current] = match.group(2) + "\n"  # the prerequisites, then the recipe
    return targets


def makefile_problems(makefile: Path, roster: roster_mod.Roster, repo: Path = REPO) -> list[str]:
    """What the Makefile lacks (or has too many) for the roster's clients, each with its fix."""
    text = makefile.read_text()
    have = {m.group(1).lower(): m.group(2) for m in _HAVE.finditer(text)}
    targets = makefile_targets(text)
    problems = []
    for name in have:
        if name not in roster:
            problems.append(
                f"HAVE_{name.upper()}_CLIENT names client {name!r}, not in {roster.path}: add "
                f"`{name}: {{folder: …, language: …, throughput_goal: …}}` there, or drop the line"
            )
    for c in roster.clients:
        var, target = f"HAVE_{c.name.upper()}_CLIENT", c.make_target
        marker = have.get(c.name)
        if marker is None:
            problems.append(f"{c.name}: add `{var} := $(wildcard {c.folder}/<a file it always has>)`")
        elif not marker.startswith(c.folder.rstrip("/") + "/") or not (repo / marker).exists():
            problems.append(f"{c.name}: {var} looks for {marker}; name an existing file under {c.folder}/")
        recipe = targets.get(target)
        if recipe is None:
            problems.append(f"{c.name}: add a `{target}:` target that installs $(BIN)/{c.binary}")
            continue
        if f"$({var})" not in recipe:
            problems.append(f"{c.name}: `{target}` should build only `$(if $({var}),…)`")
        installs = f"$(BIN)/{c.binary}" in recipe or (
            re.search(rf"-C {re.escape(c.folder)}(?![\w/-])", recipe)
            and (repo / c.folder / "Makefile").is_file()
            and f"$(BIN)/{c.binary}" in (repo / c.folder / "Makefile").read_text()
        )
        if not installs:
            problems.append(
                f"{c.name}: `{target}` must install $(BIN)/{c.binary} (itself, or via `make -C {c.folder}`)"
            )
        if not re.search(rf"(?<![\w-]){re.escape(target)}(?![\w-])", targets.get("build", "")):
            problems.append(f"{c.name}: add {target} to the `build:` recipe's $(MAKE) line")
        if target not in targets.get(".PHONY", "").split():
            problems.append(f"{c.name}: add {target} to .PHONY")
        test = f"test-{c.name}"
        # test-rust runs after the streams
        runs = "".join(targets.get(t, "") for t in ("test", "test-serial", "test-beside"))
        if test in targets and not re.search(rf"(?<![\w-]){test}(?![\w-])", runs):
            problems.append(f"{c.name}: add {test} to the `test-serial:` recipe's list of steps")
    return problems


def test_the_makefile_builds_every_client_of_the_roster():
    problems = makefile_problems(REPO / "Makefile", ROSTER)
    assert not problems, "Makefile and bench-config/clients.yaml disagree:\n" + "\n".join(problems)


ZIG = "  zig: {folder: clients/zig, language: zig, throughput_goal: 0.8}\n"


@pytest.fixture
def seventh(tmp_path):
    """The repository's roster plus a seventh client."""
    path = tmp_path / "clients.yaml"
    path.write_text((CONFIG / "clients.yaml").read_text() + ZIG)
    return roster_mod.load(path)


def test_a_client_added_to_the_roster_but_not_the_makefile_is_named(seventh):
    problems = makefile_problems(REPO / "Makefile", seventh)
    assert problems and all(p.startswith("zig: ") for p in problems), problems
    assert "add `HAVE_ZIG_CLIENT := $(wildcard clients/zig/<a file it always has>)`" in problems[0]
    assert any("add a `build-zig:` target that installs $(BIN)/client-zig" in p for p in problems)


def test_a_makefile_client_missing_from_the_roster_is_named(seventh, tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        (REPO / "Makefile").read_text()
        + "HAVE_ZIG_CLIENT := $(wildcard clients/zig/build.zig)\n"
        + "build-zig:\n\t$(if $(HAVE_ZIG_CLIENT),zig build && install -m 755 z $(BIN)/client-zig)\n"
    )
    problems = makefile_problems(makefile, ROSTER)
    assert len(problems) == 1 and "HAVE_ZIG_CLIENT names client 'zig', not in" in problems[0], problems
    # With its roster line, what is left is the wiring: `build:`, .PHONY (and its folder).
    left = " | ".join(makefile_problems(makefile, seventh))
    assert "`build:`" in left and ".PHONY" in left and "add `HAVE_ZIG" not in left, left
