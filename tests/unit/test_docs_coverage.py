"""Names the docs give still name something: `scripts/docs_coverage.py --stale` over docs/*.md
and README.md (a module moved or renamed must take its pages with it)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_docs_generated import ROOT, script


def test_no_page_names_what_the_tree_does_not_have() -> None:
    coverage = script("docs_coverage")
    assert coverage.stale_names(ROOT) == []


def test_a_stale_page_is_caught() -> None:
    coverage = script("docs_coverage")
    tree = coverage._tree(ROOT)
    page = (
        "Moved: `harness/faults/gone.py`, `harness.faults.kind.NoSuchName`, `harness.nowhere`,\n"
        "`gone_module.py`, `experiments/nowhere/*.yaml`. Still there: `harness/faults/kind.py`,\n"
        "`harness.faults.kind.FaultKind`, `python -m harness.nodes.watchdog`, `kind.py`,\n"
        "`experiments/incidents/<name>.yaml`, `spark_jobs/jars/` (a build output, ignored),\n"
        "`results/<run-id>/` (not a folder of the tree), `acks: all` (not a name).\n"
        "```\nharness/in/a/code/block.py\n```\n"
    )
    assert coverage.stale_in(ROOT, "docs/x.md", page, tree) == [
        "harness/faults/gone.py",
        "harness.faults.kind.NoSuchName",
        "harness.nowhere",
        "gone_module.py",
        "experiments/nowhere/*.yaml",
    ]


def test_the_readmes_links_lead_to_files() -> None:
    coverage = script("docs_coverage")
    tree = coverage._tree(ROOT)
    text = "[ok](docs/spec.md#matrix) [gone](docs/gone.md) [web](https://x.org/a.md) [top](#x)"
    assert coverage.stale_in(ROOT, "README.md", text, tree) == ["docs/gone.md"]


def test_the_pages_example_is_allowed_where_it_is_the_example(tmp_path: Path) -> None:
    coverage = script("docs_coverage")
    tree = coverage._tree(ROOT)
    example = "`harness/faults/cut_listener.py`"
    assert coverage.stale_in(ROOT, "docs/adding-a-fault.md", example, tree) == []
    assert coverage.stale_in(ROOT, "docs/faults.md", example, tree) == [example.strip("`")]
