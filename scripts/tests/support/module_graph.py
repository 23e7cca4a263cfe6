"""The import graph of scripts/hftbench (or of any package folder) and its cycles: read by the
structure checks (repo/test_structure.py; server/test_structure_server.py runs `cycles` over the
server's module tree) and by test_verdict_type.py's check that store imports nothing of publish."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "hftbench"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def modules_of(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name under the package ("judge.stats", "metrics") -> file."""
    out = {}
    for p in sorted(package.rglob("*.py")):
        if p.stem in ("__init__", "__main__") or "__pycache__" in p.parts:
            continue
        out[".".join(p.relative_to(package).with_suffix("").parts)] = p
    return out


def imports_of(name: str, path: Path, modules: set[str], package: str = "hftbench") -> set[str]:
    """The package modules `name` (at `path`) imports at run time (typing-only imports left out)."""
    found: set[str] = set()
    here = name.split(".")[:-1]  # the module's own subpackage

    def resolve(base: list[str], names: list[str]) -> None:
        dotted = ".".join(base)
        for n in names:  # `from pkg import module` names a module; otherwise the names come from pkg
            target = f"{dotted}.{n}" if dotted else n
            if target in modules:
                found.add(target)
        if dotted in modules:
            found.add(dotted)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                base = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
                resolve(base, names)
            elif node.module and node.module.split(".")[0] == package:
                resolve(node.module.split(".")[1:], names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == package and ".".join(parts[1:]) in modules:
                    found.add(".".join(parts[1:]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found - {name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    files = modules_of(package)
    return {name: imports_of(name, path, set(files), package.name) for name, path in files.items()}


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
