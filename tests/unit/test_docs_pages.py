"""The site's first page is not a copy of the README: what both say (what kafka-chaos is, the
three commands, a real run, the known limits) is included from README.md's sections by the
snippets extension; the rest of docs/index.md routes. README's Status is a table, its limits
a list, and its three commands come first."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
SECTIONS = ("intro", "commands", "real-run", "limits")
STATUS_HEADER = "| capability | docs | experiments | known limits |"


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def index() -> str:
    return (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


def section(text: str, name: str) -> str:
    begin, end = f"<!-- --8<-- [start:{name}] -->", f"<!-- --8<-- [end:{name}] -->"
    assert text.count(begin) == 1 and text.count(end) == 1, name
    return text.split(begin, 1)[1].split(end, 1)[0]


def copied_lines(page: str, source: str) -> list[str]:
    """Lines of prose `page` holds that `source` holds too (a copy that will drift)."""
    theirs = {" ".join(line.split()) for line in source.splitlines()}
    return [
        line
        for line in (" ".join(raw.split()) for raw in page.splitlines())
        if len(line) > 40 and not line.startswith("--8<--") and line in theirs
    ]


def test_the_first_page_includes_the_readmes_sections() -> None:
    text = readme()
    for name in SECTIONS:
        assert section(text, name).strip(), name
        assert f'--8<-- "README.md:{name}"' in index(), name


def test_the_first_page_copies_no_line_of_the_readme() -> None:
    assert copied_lines(index(), readme()) == []


def test_a_copied_line_is_caught() -> None:
    text = readme()
    line = next(ln for ln in section(text, "intro").splitlines() if len(ln) > 40)
    assert copied_lines(index() + "\n" + line + "\n", text) == [" ".join(line.split())]


def test_the_included_sections_have_no_links() -> None:
    # README's links are relative to the root; on the site they would lead nowhere
    for name in SECTIONS:
        assert not re.search(r"\]\([^)]*\)", section(readme(), name)), name


def test_the_three_commands_come_first() -> None:
    text = readme()
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    first = next(b for b in blocks if re.search(r"^make ", b, flags=re.M))
    commands = [line.split()[1] for line in first.splitlines() if line.startswith("make ")]
    assert commands == ["setup", "test", "chaos-run"]
    assert text.index(first) < text.index("## Status")


def test_the_status_is_a_table_and_the_limits_a_list() -> None:
    status = readme().split("## Status\n", 1)[1].split("\n## ", 1)[0]
    assert STATUS_HEADER in status
    rows = [ln for ln in status.splitlines() if ln.startswith("| ") and ln != STATUS_HEADER]
    assert len(rows) >= 5 and all(ln.count(" | ") == 3 for ln in rows)
    paragraphs = [
        p for p in status.split("\n\n") if p.strip() and not p.lstrip().startswith(("|", "-", "<"))
    ]
    for paragraph in paragraphs:  # prose around the table stays short: no changelog here
        assert paragraph.count("\n") < 3, paragraph
    limits = section(readme(), "limits")
    assert "never run on GitHub" in limits and "skewed ahead" in limits
