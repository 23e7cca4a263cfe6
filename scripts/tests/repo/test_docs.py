"""The docs a newcomer reads first keep their promises (issue 63): README.md says what hft-bench
is, the two commands, what you get and how to read a verdict in at most 250 lines, with no
table cell over 400 characters and no dated log; docs/measurements.md gives the current
figure of each subject with its command in at most 400 lines. Every link into either file,
and every section of docs/measurements.md a file of the repository cites by its title,
resolves."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
MEASUREMENTS = ROOT / "docs" / "measurements.md"
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
COMMENT_LEADER = re.compile(r"^\s*(#|//|\*|--)\s?")
# `docs/measurements.md, 2026-11-28 "The concurrency series"`, `measurements.md ("On 16 cores")`
CITED_TITLE = re.compile(r"measurements\.md[^\"\n]{0,40}?\"([^\"]{3,80})\"")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path: Path) -> list[str]:
    out, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.append(line.lstrip("#").strip())
    return out


def table_cells(text: str) -> list[str]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    # an escaped pipe (`\|`) stays inside its cell
    return [cell.strip() for row in rows for cell in re.split(r"(?<!\\)\|", row.strip("|"))]


def tracked_files() -> list[str]:
    try:
        listing = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tree's file list comes from git")
    return [p for p in listing.splitlines() if not p.startswith("third_party/") and (ROOT / p).is_file()]


def test_readme_is_a_page_not_a_log():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    long_cells = [cell[:60] for cell in table_cells(text) if len(cell) > 400]
    assert long_cells == [], "README table cells over 400 characters"
    assert DATE.findall(text) == [], "a dated log belongs in docs/measurements.md and git"


def test_readme_has_the_two_commands_and_how_to_read_a_verdict():
    text = README.read_text()
    assert "make bench" in text and "make test" in text and "make deps" in text
    titles = headings(README)
    for title in ("The two commands", "What you get", "How to read a verdict", "Tests", "Network scenarios"):
        assert title in titles
    for status in ("Regression", "Invalid", "Inconclusive", "under the gate", "No change", "could detect"):
        assert status in text


def test_measurements_fit_in_400_lines_each_subject_once():
    titles = headings(MEASUREMENTS)
    assert len(MEASUREMENTS.read_text().splitlines()) <= 400
    assert len(titles) == len(set(titles)), "one section per subject"
    assert "A failure is data" in titles


def test_links_into_the_readme_and_measurements_resolve():
    anchors = {
        README: {slug(h) for h in headings(README)},
        MEASUREMENTS: {slug(h) for h in headings(MEASUREMENTS)},
    }
    broken = []
    for rel in filter(lambda p: p.endswith(".md"), tracked_files()):
        source = ROOT / rel
        for target, anchor in MARKDOWN_LINK.findall(source.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (source.parent / target).resolve() if target else source
            if source == README and not path.exists():
                broken.append(f"{rel}: {target}")
            elif path in anchors and anchor and anchor not in anchors[path]:
                broken.append(f"{rel}: {target}#{anchor}")
    assert broken == []


def test_sections_of_measurements_cited_by_title_exist():
    titles = [t.lower() for t in headings(MEASUREMENTS)]
    missing = []
    for rel in tracked_files():
        if rel in ("docs/measurements.md", "scripts/tests/repo/test_docs.py"):
            continue
        try:
            lines = (ROOT / rel).read_text().splitlines()
        except UnicodeDecodeError:
            continue
        text = " ".join(COMMENT_LEADER.sub("", line).strip() for line in lines)
        for title in CITED_TITLE.findall(text):
            if not any(t.startswith(title.lower()) for t in titles):
                missing.append(f"{rel}: {title!r}")
    assert missing == []


def test_the_checks_see_what_they_promise():
    assert (
        slug("CI timings: `make bench`, `make test`, `make check`")
        == "ci-timings-make-bench-make-test-make-check"
    )
    assert slug("client-c: cost per order") == "client-c-cost-per-order"
    assert table_cells("| a | b \\| c |\n|---|---|\n") == ["a", "b \\| c", "---", "---"]
    cited = '# the figures (docs/\n# measurements.md, 2026-11-28 "The concurrency series") say'
    joined = " ".join(COMMENT_LEADER.sub("", line).strip() for line in cited.splitlines())
    assert CITED_TITLE.findall(joined) == ["The concurrency series"]
    assert MARKDOWN_LINK.findall("[a](#tests) [b](docs/x.md#y) [c](x.md)") == [
        ("", "tests"),
        ("docs/x.md", "y"),
        ("x.md", ""),
    ]
