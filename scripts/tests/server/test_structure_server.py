"""Structure checks of the Rust server (server/src) anyone can run: no cycle between its
modules (file lengths, in every language: test_file_sizes.py).

The module tree comes from the `mod` declarations (files, `#[path]`, inline `mod x { }`
blocks). A module depends on another when it names it in a path: `use crate::…`,
`super::…`, `self::…`, a child module's name (`fast::read`), in a `use` or anywhere in the
code (`crate::order::parse(…)`). A path counts for the deepest module it reaches, so
`crate::Config` is a use of the crate root, `super::Raw` one of the parent. Containment
alone (`mod child;`) is not a use: a test module's `use super::*` is no cycle, a parent
calling into a child that uses the parent back is. Comments and literals are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.module_graph import cycles

SERVER_SRC = Path(__file__).resolve().parents[3] / "server" / "src"
ROOT = "crate"

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_str>b?r(?P<hashes>\#*)")
  | (?P<str>b?"(?:\\.|[^"\\])*")
  | (?P<char>b?'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^'\\])')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>r\#[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<path_sep>::)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokens(text: str) -> list[tuple[str, str]]:
    """Identifiers, string literals (their text, for `#[path]`) and punctuation, with `::`
    as one token; comments, whitespace, chars, lifetimes and numbers left out."""
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        assert m, f"cannot tokenize at {at}: {text[at : at + 20]!r}"
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw_str"
        if m.group("block_comment"):
            depth, at = 1, m.end()
            while depth:  # Rust block comments nest
                opened, closed = text.find("/*", at), text.find("*/", at)
                assert closed >= 0, "unterminated block comment"
                if 0 <= opened < closed:
                    depth, at = depth + 1, opened + 2
                else:
                    depth, at = depth - 1, closed + 2
            continue
        if m.group("raw_str") is not None:
            end = text.index('"' + m.group("hashes"), m.end())
            out.append(("str", text[m.end() : end]))
            at = end + 1 + len(m.group("hashes"))
            continue
        at = m.end()
        if kind == "str":
            out.append(("str", m.group()[m.group().index('"') + 1 : -1]))
        elif kind in ("ident", "path_sep", "punct"):
            out.append((kind, m.group().removeprefix("r#")))
    return out


def _use_paths(toks: list[tuple[str, str]], i: int, prefix: list[str]) -> tuple[list[list[str]], int]:
    """The paths of one use tree starting at toks[i], each a list of segments; and the index
    after it (at the `,`, `}` or `;` that ends it)."""
    segments = list(prefix)
    while i < len(toks):
        kind, text = toks[i]
        if text == "{":
            paths: list[list[str]] = []
            i += 1
            while toks[i][1] != "}":
                found, i = _use_paths(toks, i, segments)
                paths += found
                if toks[i][1] == ",":
                    i += 1
            return paths, i + 1
        if kind == "ident" and text != "as" and (i == 0 or toks[i - 1][1] != "as"):
            if text == "self" and segments:
                return [segments], i + 1  # `use a::{self}` is `a`
            segments.append(text)
        elif text in ("*", ";", ",", "}"):
            return [segments], i + (text == "*")
        i += 1
    return [segments], i


class _Crate:
    """The module tree of one crate and the paths each module names."""

    def __init__(self, root_file: Path) -> None:
        self.children: dict[str, set[str]] = {}
        self.paths: dict[str, list[list[str]]] = {}
        self._read(root_file, ROOT, root_file.parent)

    def _read(self, file: Path, module: str, child_dir: Path) -> None:
        toks = tokens(file.read_text())
        # (module, brace depth at which its inline block closes, directory of its `mod x;`)
        stack = [(module, -1, child_dir)]
        self.children.setdefault(module, set())
        depth, pending_path, i = 0, None, 0
        while i < len(toks):
            kind, text = toks[i]
            current, _, here = stack[-1]
            nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
            before = toks[i - 1][1] if i else ""
            if text == "#" and [t for _, t in toks[i + 1 : i + 4]] == ["[", "path", "="]:
                pending_path, i = toks[i + 4][1], i + 6
                continue
            if text == "{":
                depth += 1
            elif text == "}":
                if stack[-1][1] == depth:
                    stack.pop()
                depth -= 1
            elif kind == "ident" and text == "mod" and toks[i + 1][0] == "ident":
                name, opener = toks[i + 1][1], toks[i + 2][1]
                child = f"{current}::{name}"
                self.children[current].add(name)
                self.children.setdefault(child, set())
                if opener == "{":
                    stack.append((child, depth + 1, here / name))
                elif pending_path:
                    # Relative to the file's own folder outside inline blocks; its children
                    # live beside it, as a mod.rs file's do.
                    path = (file.parent if len(stack) == 1 else here) / pending_path
                    self._read(path, child, path.parent)
                elif (here / f"{name}.rs").exists():
                    self._read(here / f"{name}.rs", child, here / name)
                else:
                    self._read(here / name / "mod.rs", child, here / name)
                pending_path = None
                i += 2
                continue
            elif kind == "ident" and text == "use" and before != "::":
                paths, i = _use_paths(toks, i + 1, [])
                self.paths.setdefault(current, []).extend(paths)
                continue
            elif kind == "ident" and nxt == "::" and before != "::":
                segments = [text]
                j = i + 1
                while j + 1 < len(toks) and toks[j][1] == "::" and toks[j + 1][0] == "ident":
                    segments.append(toks[j + 1][1])
                    j += 2
                self.paths.setdefault(current, []).append(segments)
                i = j
                continue
            i += 1

    def resolve(self, module: str, segments: list[str]) -> str | None:
        """The deepest module of the crate `segments` (a path named in `module`) reaches;
        None for a path outside the crate (std, serde) or a type's item (`Field::Price`)."""
        parts = module.split("::")
        if segments[0] == "crate":
            parts, segments = [ROOT], segments[1:]
        elif segments[0] in ("self", "super"):
            while segments and segments[0] in ("self", "super"):
                if segments[0] == "super":
                    parts = parts[:-1]
                segments = segments[1:]
        elif segments[0] not in self.children[module]:
            return None
        for name in segments:
            if name not in self.children.get("::".join(parts), ()):
                break
            parts = [*parts, name]
        return "::".join(parts)

    def graph(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {module: set() for module in self.children}
        for module, paths in self.paths.items():
            for segments in paths:
                target = self.resolve(module, segments)
                if target is not None and target != module:
                    out[module].add(target)
        return out


def module_graph(src: Path = SERVER_SRC, root: str = "lib.rs") -> dict[str, set[str]]:
    """Each module of the crate rooted at `src/root` (`crate`, `crate::order::json`, …)
    and the modules it uses."""
    return _Crate(src / root).graph()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_parser_reads_uses_paths_and_the_module_tree(tmp_path):
    _write(
        tmp_path,
        {
            "lib.rs": (
                "//! Uses `crate::c` only in a comment.\n"
                'pub mod a;\nmod b;\n#[path = "other_name.rs"]\nmod c;\npub mod d;\n'
                "pub use a::Thing;\n"
            ),
            "a.rs": (
                "use crate::{b::{self, helper as h}, d};\nuse std::fmt;\n"
                "pub struct Thing;\n"
                "fn f() { let s = \"crate::c::x\"; let t = 'c'; }\n"
                "#[cfg(test)]\nmod tests {\n    use super::*;\n    fn g<'a>(x: &'a str) {}\n}\n"
            ),
            "b.rs": "pub fn helper() { crate::c::go(); /* super::a /* nested */ */ }\n",
            "other_name.rs": (
                'pub fn go() { let _ = super::d::Item::Variant; }\nconst R: &str = r#"use crate::a;"#;\n'
            ),
            "d/mod.rs": "mod e;\npub enum Item { Variant }\nfn f() { e::run(); }\n",
            "d/e.rs": "pub fn run() { crate::a::Thing; }\nmod inner {\n    mod deep;\n}\n",
            "d/e/inner/deep.rs": "use super::super::run;\n",
        },
    )
    assert module_graph(tmp_path) == {
        "crate": {"crate::a"},
        "crate::a": {"crate::b", "crate::d"},
        "crate::a::tests": {"crate::a"},
        "crate::b": {"crate::c"},
        "crate::c": {"crate::d"},
        "crate::d": {"crate::d::e"},
        "crate::d::e": {"crate::a"},
        "crate::d::e::inner": set(),
        "crate::d::e::inner::deep": {"crate::d::e"},
    }
    assert cycles(module_graph(tmp_path)) == [["crate::a", "crate::b", "crate::c", "crate::d", "crate::d::e"]]


def test_a_parent_and_a_child_that_use_each_other_are_a_cycle(tmp_path):
    # The shape of the old order_json.rs and order_json/fast.rs, and of a module using an
    # item of the crate root that uses it.
    _write(
        tmp_path,
        {
            "lib.rs": "pub struct Config;\nmod parse;\nmod routes;\npub fn run() { routes::go(); }\n",
            "parse.rs": "mod fast;\npub struct Raw;\nfn read() { fast::read(); }\n",
            "parse/fast.rs": "use super::Raw;\npub fn read() {}\n",
            "routes.rs": "use crate::Config;\npub fn go() {}\n",
        },
    )
    assert cycles(module_graph(tmp_path)) == [
        ["crate", "crate::routes"],
        ["crate::parse", "crate::parse::fast"],
    ]


def test_no_module_cycle_in_the_server():
    for root in ("lib.rs", "main.rs"):
        found = cycles(module_graph(root=root))
        assert found == [], f"{root}: these modules use each other, directly or in a ring: {found}"
