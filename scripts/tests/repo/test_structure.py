"""Structure checks of scripts/hftbench anyone can run:

- its packages in stage order: the shared vocabulary at the top, then measure, judge,
  publish, store, commands, and cli.py on top; a module imports only from its own stage or an
  earlier one (measure never imports judge, judge never publish);
- no import cycle between its modules (lazy imports inside functions count: they hide a
  cycle, they do not remove it);
- every module of commands/ is a registered subcommand;
- no name taken from a module that only re-exports it (one home per name).

File lengths, in every language: test_file_sizes.py; the registry's imports: test_cli.py."""

from __future__ import annotations

import ast
from pathlib import Path

from hftbench import cli
from support.module_graph import PACKAGE, cycles, import_graph, modules_of

# The stages, earliest first: "" is the package's top (the shared vocabulary), "entry" the
# `hftbench` command itself (cli.py), which registers the commands.
STAGES = ("", "measure", "judge", "publish", "store", "commands", "entry")
ENTRY = {"cli"}


def stage_of(module: str) -> str:
    if module in ENTRY:
        return "entry"
    return module.split(".")[0] if "." in module else ""


def against_stage_order(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a later stage's module, as "a (stage) imports b (stage)"."""
    rank = {s: i for i, s in enumerate(STAGES)}
    out = []
    for a, targets in sorted(graph.items()):
        for b in sorted(targets):
            sa, sb = stage_of(a), stage_of(b)
            if sa not in rank or sb not in rank:
                out.append(f"{a} or {b} is in no stage: put it in one of {STAGES[1:]} or at the top")
            elif rank[sb] > rank[sa]:
                out.append(f"{a} ({sa or 'top'}) imports {b} ({sb or 'top'})")
    return out


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "hftbench"
    for rel, text in files.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    return package


def test_the_import_finder_resolves_relative_absolute_and_lazy_imports(tmp_path):
    package = _plant(
        tmp_path,
        {
            "metrics.py": "",
            "measure/cell.py": "from .. import metrics\nfrom ..judge.stats import t\n",
            "judge/stats.py": "def f():\n    from . import drift\n",
            "judge/drift.py": "from hftbench.measure import cell\nimport hftbench.metrics\n",
            "publish/report.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..commands import ab\n"
            ),
            "commands/ab.py": "from ..judge import stats, drift\nfrom ..publish.report import render\n",
        },
    )
    graph = import_graph(package)
    assert graph == {
        "commands.ab": {"judge.stats", "judge.drift", "publish.report"},
        "judge.drift": {"measure.cell", "metrics"},
        "judge.stats": {"judge.drift"},
        "measure.cell": {"metrics", "judge.stats"},
        "metrics": set(),
        "publish.report": set(),
    }
    assert cycles(graph) == [["judge.drift", "judge.stats", "measure.cell"]]
    assert against_stage_order(graph) == ["measure.cell (measure) imports judge.stats (judge)"]


def test_hftbench_packages_import_in_stage_order_only():
    assert against_stage_order(import_graph()) == []


def test_no_import_cycle_in_hftbench():
    assert cycles(import_graph()) == []


def test_every_module_of_commands_is_a_registered_subcommand():
    support = {"commands.base", "commands.flags"}  # the Command base and the shared flags
    commands = {m for m in modules_of() if stage_of(m) == "commands"} - support
    registered = {f"commands.{m}" for m in cli.SUBCOMMANDS.values()}
    assert commands - registered == set(), "add it to cli.SUBCOMMANDS, or move it out of commands/"


def _top_level_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names a module defines, names it imports), at its top level."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
    return defined, imported


def _uses(name: str, tree: ast.Module, package: str, modules: set[str]) -> list[tuple[str, str]]:
    """(package module, name) for each `from .x import name` and each `x.name` where x is a
    package module imported whole (`from . import x`, `from hftbench.judge import x`)."""
    here = name.split(".")[:-1]
    uses: list[tuple[str, str]] = []
    whole: dict[str, str] = {}  # local name -> package module
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        elif (node.module or "").split(".")[0] == package:
            base = node.module.split(".")[1:]
        else:
            continue
        dotted = ".".join(base)
        for a in node.names:
            target = f"{dotted}.{a.name}" if dotted else a.name
            if target in modules:
                whole[a.asname or a.name] = target
            elif dotted in modules:
                uses.append((dotted, a.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in whole:
            uses.append((whole[node.value.id], node.attr))
    return uses


def second_hand_imports(package: Path = PACKAGE, users: tuple[Path, ...] = ()) -> list[str]:
    """Names taken from a package module that only imports them itself (a re-export): the name
    then has two homes. Every user should take a name from the module that defines it."""
    files = modules_of(package)
    names = {m: _top_level_names(ast.parse(p.read_text(), str(p))) for m, p in files.items()}
    found = []
    for name, path in [*files.items(), *((f"tests.{u.stem}", u) for u in users)]:
        for source, used in _uses(name, ast.parse(path.read_text(), str(path)), package.name, set(files)):
            if used not in names[source][0] and used in names[source][1]:
                found.append(f"{path.name} takes {used} from {source}, which only re-exports it")
    return sorted(set(found))


def test_the_re_export_finder_finds_a_name_with_two_homes(tmp_path):
    package = _plant(
        tmp_path,
        {
            "judge/rules.py": "def classify():\n    pass\n",
            "judge/stats.py": "from .rules import classify\n\ndef pooled():\n    pass\n",
            "judge/compare.py": "from .stats import classify, pooled\nfrom .rules import classify\n",
            "publish/drift.py": (
                "from ..judge import rules, stats\nstats.pooled()\nstats.classify()\nrules.classify()\n"
            ),
        },
    )
    user = tmp_path / "test_compare.py"
    user.write_text("from hftbench.judge.stats import classify\n")
    assert second_hand_imports(package, (user,)) == [
        "compare.py takes classify from judge.stats, which only re-exports it",
        "drift.py takes classify from judge.stats, which only re-exports it",
        "test_compare.py takes classify from judge.stats, which only re-exports it",
    ]


def test_every_hftbench_name_is_imported_from_its_own_module():
    tests = tuple(sorted(p for p in Path(__file__).parents[1].rglob("*.py") if "__pycache__" not in p.parts))
    assert second_hand_imports(users=tests) == []
