"""The documentation stays inside the repository and names the rules the tests check.

Every relative link in README.md and docs/*.md resolves to a file inside the repository
(and to an anchor of the page, when it names one); nothing points at the rules texts kept
outside the clone; docs/README.md lists every page; the rules pages have a heading and an
anchor for every rule ID, worked example and rule decision that a test is named after.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
SOURCES = [p for d in ("mountain_rummy_env", "agents", "experiments", "benchmarks", "tests")
           for p in sorted((ROOT / d).rglob("*.py")) if p != Path(__file__).resolve()]

FENCED = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)[^)]*\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)           # https:, mailto:, ...
OUTSIDE_NAMES = ("shared/", "RULES.md", "DESIGN.md")       # files that live beside the clone

# test-name prefix -> (rules page, how the page writes the ID); rules and worked examples
# are headings, German's, Crazy's and Robber's rule decisions (D1 ...) items of a numbered
# list, named in test names d1 ... (German), cd1 ... (Crazy) and rd1 ... (Robber's)
RULE_IDS = {
    "mr": ("mountain_rummy.md", "MR-{}"),
    "e": ("mountain_rummy.md", "E{}"),
    "gr": ("gin_rummy.md", "GR-{}"),
    "ge": ("german_rummy.md", "GE-{}"),
    "r": ("german_rummy.md", "R{}"),
    "d": ("german_rummy.md", "D{}"),
    "cr": ("crazy_rummy.md", "CR-{}"),
    "cd": ("crazy_rummy.md", "D{}"),
    "rr": ("robbers_rummy.md", "RR-{}"),
    "rd": ("robbers_rummy.md", "D{}"),
}


def links(page: Path) -> list[str]:
    """Link targets of a markdown page, code blocks and code spans left out."""
    return LINK.findall(INLINE_CODE.sub("", FENCED.sub("", page.read_text())))


def anchors(page: Path) -> set[str]:
    """Anchors a link may name on ``page``: explicit ``<a id>``s and GitHub's heading slugs
    (lower case, punctuation dropped, spaces to hyphens, repeats numbered)."""
    text = FENCED.sub("", page.read_text())
    found = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        repeat = 0
        while (slug if repeat == 0 else f"{slug}-{repeat}") in found:
            repeat += 1
        found.add(slug if repeat == 0 else f"{slug}-{repeat}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve_inside_the_repository(page):
    name = page.relative_to(ROOT)
    for target in links(page):
        if SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.is_relative_to(ROOT), f"{name}: {target} leaves the repository"
        assert dest.exists(), f"{name}: {target} does not exist"
        if anchor:
            assert dest.suffix == ".md" and anchor in anchors(dest), \
                f"{name}: {target} names no anchor of {dest.name}"


def test_nothing_points_at_the_rules_texts_outside_the_clone():
    for path in PAGES + SOURCES:
        text = path.read_text()
        for name in OUTSIDE_NAMES:
            assert name not in text, \
                f"{path.relative_to(ROOT)} names {name}, which is not in the repository"


def test_readme_links_the_rules_pages_and_the_docs_index():
    targets = set(links(ROOT / "README.md"))
    assert {"docs/mountain_rummy.md", "docs/gin_rummy.md", "docs/README.md"} <= targets


def test_docs_index_lists_every_page():
    index = DOCS / "README.md"
    listed = {(DOCS / t).resolve() for t in links(index)}
    missing = [p.name for p in DOCS.glob("*.md") if p != index and p.resolve() not in listed]
    assert not missing, f"docs/README.md does not list {missing}"


def test_every_tested_rule_has_a_heading_and_an_anchor():
    tested = {(m[0], int(m[1])) for p in sorted((ROOT / "tests").glob("test_*.py"))
              for m in re.findall(r"^def test_(mr|gr|ge|cr|cd|rr|rd|e|r|d)(\d+)_", p.read_text(), re.M)}
    assert {("mr", n) for n in range(1, 15)} <= tested     # the scan finds the rule tests
    assert {("ge", n) for n in range(1, 10)} <= tested
    assert {("cr", n) for n in range(1, 6)} <= tested
    assert {("rr", n) for n in range(1, 8)} <= tested
    missing = []
    for prefix, number in sorted(tested):
        page, form = RULE_IDS[prefix]
        label = form.format(number)
        text = (DOCS / page).read_text()
        introduced = rf"^(?:#+ |\d+\. <a id=\"{label.lower()}\"></a>\*\*){label}\b"
        if not re.search(introduced, text, re.M) or label.lower() not in anchors(DOCS / page):
            missing.append(f"{page}: {label}")
    assert not missing, f"no heading with an anchor for {missing}"
