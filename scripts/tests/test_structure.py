"""Structure checks of scripts/hftbench anyone can run: no import cycle between its modules
(lazy imports inside functions count: they hide a cycle, they do not remove it), and no name
taken from a module that only re-exports it (one home per name). File lengths, in every
language: test_file_sizes.py."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hftbench"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package modules `path` imports at run time (typing-only imports left out)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import y
                found.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import x, y
                found.update(a.name for a in node.names)
            elif node.level == 0 and node.module and node.module.split(".")[0] == "hftbench":
                parts = node.module.split(".")
                found.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "hftbench" and len(parts) > 1:
                    found.add(parts[1])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return (found & modules) - {path.stem}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    files = {p.stem: p for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return {name: imports_of(path, set(files)) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return out


def test_the_cycle_finder_finds_a_cycle_hidden_by_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .c import g\n")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nfrom hftbench.a import x\n")
    (tmp_path / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n"
    )
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_in_hftbench():
    assert cycles(import_graph()) == []


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


def _uses(tree: ast.Module, package: str) -> list[tuple[str, str]]:
    """(package module, name) for each `from .x import name` and each `x.name` where x is a
    package module imported whole (`from . import x`, `from hftbench import x`)."""
    uses: list[tuple[str, str]] = []
    modules: dict[str, str] = {}  # local name -> package module
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = (node.module or "").split(".")
        if node.level == 1 and node.module:
            uses += [(parts[0], a.name) for a in node.names]
        elif node.level == 0 and parts[0] == package and len(parts) > 1:
            uses += [(parts[1], a.name) for a in node.names]
        elif (node.level == 1 and not node.module) or (node.level == 0 and parts == [package]):
            modules.update({a.asname or a.name: a.name for a in node.names})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            uses.append((modules[node.value.id], node.attr))
    return uses


def second_hand_imports(package: Path = PACKAGE, users: tuple[Path, ...] = ()) -> list[str]:
    """Names taken from a package module that only imports them itself (a re-export): the name
    then has two homes. Every user should take a name from the module that defines it."""
    files = {p.stem: p for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    names = {stem: _top_level_names(ast.parse(p.read_text(), str(p))) for stem, p in files.items()}
    found = []
    for path in [*files.values(), *users]:
        for source, name in _uses(ast.parse(path.read_text(), str(path)), package.name):
            if source in names and name not in names[source][0] and name in names[source][1]:
                found.append(f"{path.name} takes {name} from {source}.py, which only re-exports it")
    return sorted(set(found))


def test_the_re_export_finder_finds_a_name_with_two_homes(tmp_path):
    package = tmp_path / "hftbench"
    package.mkdir()
    (package / "rules.py").write_text("def classify():\n    pass\n")
    (package / "stats.py").write_text("from .rules import classify\n\ndef pooled():\n    pass\n")
    (package / "compare.py").write_text("from .stats import classify, pooled\nfrom .rules import classify\n")
    (package / "drift.py").write_text(
        "from . import rules, stats\nstats.pooled()\nstats.classify()\nrules.classify()\n"
    )
    user = tmp_path / "test_compare.py"
    user.write_text("from hftbench.stats import classify\n")
    assert second_hand_imports(package, (user,)) == [
        "compare.py takes classify from stats.py, which only re-exports it",
        "drift.py takes classify from stats.py, which only re-exports it",
        "test_compare.py takes classify from stats.py, which only re-exports it",
    ]


def test_every_hftbench_name_is_imported_from_its_own_module():
    tests = tuple(sorted(Path(__file__).parent.glob("*.py")))
    assert second_hand_imports(users=tests) == []
