"""The docs generated from the code are what the code says: adding-a-fault's flag and kind
tables, registry snippet and typo error, development.md's import contracts and layout
(scripts/docs_generated.py). A stale page fails here, naming the block to regenerate."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import pytest

from harness.faults.kind import COMMON_KEYS, FaultKind
from harness.faults.registry import ALL_KINDS, SPEC_WORDS
from tests.unit.test_spec import errors_of

ROOT = Path(__file__).parents[2]
FAULT_PAGE = Path("docs/adding-a-fault.md")
DEV_PAGE = Path("docs/development.md")


def script(name: str) -> ModuleType:
    """scripts/<name>.py, loaded as a module (scripts/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return script("docs_generated")


@pytest.fixture(scope="module")
def bodies(gen: ModuleType) -> dict[Path, dict[str, str]]:
    rendered: dict[Path, dict[str, str]] = gen.rendered(ROOT)
    return rendered


def test_the_committed_pages_equal_the_generated_ones(gen: ModuleType) -> None:
    assert gen.stale(ROOT) == [], "stale docs: run `python scripts/docs_generated.py`"


def without_line(text: str, needle: str) -> str:
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if needle in line]
    assert len(hits) == 1, needle
    return "".join(lines[: hits[0]] + lines[hits[0] + 1 :])


def test_a_flag_missing_from_the_table_is_a_stale_block(gen: ModuleType, bodies: dict) -> None:
    page = (ROOT / FAULT_PAGE).read_text(encoding="utf-8")
    stale = without_line(page, "| `needs` | `()` |")
    assert gen.stale_blocks(stale, bodies[FAULT_PAGE], FAULT_PAGE) == ["fault-flags"]
    assert gen.fill(stale, "fault-flags", bodies[FAULT_PAGE]["fault-flags"], FAULT_PAGE) == page


def test_a_flag_the_code_no_longer_has_is_a_stale_block(gen: ModuleType, bodies: dict) -> None:
    page = (ROOT / FAULT_PAGE).read_text(encoding="utf-8")
    row = "| `broker_only` | `False` |"
    stale = page.replace(row, "| `gone_flag` | `False` | an old flag |\n" + row, 1)
    assert gen.stale_blocks(stale, bodies[FAULT_PAGE], FAULT_PAGE) == ["fault-flags"]


def test_a_kind_missing_from_the_list_is_a_stale_block(gen: ModuleType, bodies: dict) -> None:
    page = (ROOT / FAULT_PAGE).read_text(encoding="utf-8")
    stale = without_line(page, "| `clock-skew` |")
    assert gen.stale_blocks(stale, bodies[FAULT_PAGE], FAULT_PAGE) == ["fault-kinds"]


def test_a_module_missing_from_the_layout_is_a_stale_block(gen: ModuleType, bodies: dict) -> None:
    page = (ROOT / DEV_PAGE).read_text(encoding="utf-8")
    stale = without_line(page, "| `cluster/views.py` |")
    assert gen.stale_blocks(stale, bodies[DEV_PAGE], DEV_PAGE) == ["layout"]


def test_a_page_without_its_markers_is_an_error(gen: ModuleType) -> None:
    with pytest.raises(ValueError, match="generated:layout:begin"):
        gen.fill("# no markers\n", "layout", "x\n", DEV_PAGE)


def test_every_flag_and_kind_is_on_the_page() -> None:
    faults = script("docs_faults")
    page = (ROOT / FAULT_PAGE).read_text(encoding="utf-8")
    flags = [f.name for f in faults.flags()]
    declared = set(FaultKind.__class_vars__) - {"own_options"}
    assert set(flags) == declared  # every class variable but the derived one
    for name in flags:
        assert f"| `{name}` |" in page, name
    for kind in ALL_KINDS:
        assert f"| `{kind.name}`" in page, kind.name
    for key in COMMON_KEYS:  # the sentence naming the keys every fault has
        assert f"`{key}`" in page, key


def test_a_flag_without_a_comment_is_an_error() -> None:
    faults = script("docs_faults")

    class Silent(FaultKind):
        name: ClassVar[str] = "silent"

    with pytest.raises(ValueError, match=r"Silent\.name: no comment"):
        faults.flags(Silent)


def test_the_typo_error_is_the_specs_own_list_with_the_example_in_it(tmp_path: Path) -> None:
    faults = script("docs_faults")
    text = "name: x\nproducer: {records: 10}\nfaults: [{at_s: 1, kind: cut-listner}]\n"
    real = " ".join(errors_of(tmp_path, text)).split("expected one of ", 1)[1].split(" (got")[0]
    shown = " ".join(faults.misspelt_kind_error().split()).split("expected one of ", 1)[1]
    shown_words = shown.split(" (got")[0].split(", ")
    assert [w for w in shown_words if w != "cut-listener"] == real.split(", ") == list(SPEC_WORDS)
    last_cluster = [k for k in ALL_KINDS if k.plays == "cluster"][-1]
    at = shown_words.index("cut-listener")
    assert shown_words[at - 1] == last_cluster.name
    assert f"    {last_cluster.__name__},\n    CutListener," in faults.registry_snippet()


def test_the_kind_table_names_the_modules_that_know_a_kind(tmp_path: Path) -> None:
    faults = script("docs_faults")
    (tmp_path / "harness" / "faults").mkdir(parents=True)
    (tmp_path / "harness" / "faults" / "x.py").write_text("from a import Kill\n")  # its own
    (tmp_path / "harness" / "nemesis.py").write_text(
        "from harness.faults.kill import Kill\n\ndef f(s):\n    return isinstance(s, Kill)\n"
    )
    (tmp_path / "harness" / "other.py").write_text('"""Kill the broker."""\n')  # prose only
    row = next(r for r in faults.kind_table(tmp_path).splitlines() if r.startswith("| `kill`"))
    assert row.endswith("| `harness/nemesis.py` |")


def test_the_layout_follows_the_tree(tmp_path: Path) -> None:
    layout = script("docs_layout")
    files = {
        "harness/__init__.py": '"""The harness. More words."""\n',
        "harness/cli.py": '"""Command line: verbs, e.g. `run`. Details."""\n',
        "harness/things/__init__.py": '"""Things: one module each."""\n',
        "harness/things/one.py": '"""The first thing,\nwrapped. Then more."""\n',
        "harness/templates/page.j2": "x\n",
        "spark_jobs/__init__.py": '"""Checks."""\n',
        "scripts/go.sh": "#!/bin/sh\n# Go somewhere.\n# Then stop.\nexit 0\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    described = {"scripts": "what make runs"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(layout, "FOLDERS", described)
        page = layout.layout(tmp_path, sorted(files), ["run", "verify"])
        assert "| `cli.py` | Command line: verbs, e.g. `run`. Commands: run, verify. |" in page
        assert "| **`things/`** | Things: one module each. |" in page
        assert "| `things/one.py` | The first thing, wrapped. |" in page
        assert "| `templates/` | (not a package) `page.j2` |" in page
        assert "| `scripts/go.sh` | Go somewhere. |" in page
        # a module added is a row more; a folder nobody described, or one gone, is an error
        (tmp_path / "harness" / "two.py").write_text('"""Second."""\n')
        page2 = layout.layout(tmp_path, sorted([*files, "harness/two.py"]), [])
        assert "| `two.py` | Second. |" in page2
        with pytest.raises(ValueError, match="examples/ has no description"):
            layout.layout(tmp_path, sorted([*files, "examples/x.py"]), [])
        mp.setattr(layout, "FOLDERS", {**described, "docker": "images"})
        with pytest.raises(ValueError, match="docker/ is described but not in the tree"):
            layout.layout(tmp_path, sorted(files), [])


def test_the_layout_names_every_module_and_command(bodies: dict) -> None:
    layout = script("docs_layout")
    page = bodies[DEV_PAGE]["layout"]
    for top in layout.PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT / top).as_posix()
            if rel == "__init__.py":
                continue
            package = rel.endswith("/__init__.py")
            shown = f"| **`{rel[: -len('/__init__.py')]}/`** |" if package else f"| `{rel}` |"
            assert shown in page, f"{top}/{rel}"
    for verb in ("run", "validate", "verify", "merge-shards"):
        assert verb in layout.cli_commands()
    assert "merge-shards" in page


def test_the_import_contracts_are_pyprojects(bodies: dict) -> None:
    text = bodies[DEV_PAGE]["import-contracts"]
    assert "`cli | pytest_plugin` > `suite`" in text
    assert "(`checks-read-the-folder`)" in text


def test_first_sentence() -> None:
    layout = script("docs_layout")
    assert layout.first_sentence("One, e.g. two. Three.") == "One, e.g. two."
    assert layout.first_sentence("A `x`.\n\nB.") == "A `x`."
    assert layout.first_sentence("Wrapped\nline") == "Wrapped line."
