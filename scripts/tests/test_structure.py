"""Structure checks of scripts/hftbench anyone can run: no import cycle between its modules
(lazy imports inside functions count: they hide a cycle, they do not remove it) and no
module past 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hftbench"
MAX_LINES = 400


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


def test_no_module_past_400_lines():
    long = {p.name: n for p in PACKAGE.glob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"split these modules (limit {MAX_LINES} lines): {long}"
