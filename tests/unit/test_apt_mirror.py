"""The debootstrap mirror comes from the host's apt sources, in either format."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "apt_mirror", Path(__file__).resolve().parents[2] / "docker" / "apt_mirror.py"
)
assert SPEC and SPEC.loader
apt_mirror = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(apt_mirror)


def test_deb822(tmp_path: Path) -> None:
    f = tmp_path / "debian.sources"
    f.write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n"
    )
    entries = apt_mirror.deb822_entries(str(f))
    assert entries[0] == (["http://mirror.example/debian"], ["bookworm", "bookworm-updates"])
    assert entries[1][1] == ["bookworm-security"]


def test_disabled_deb822_stanza_is_skipped(tmp_path: Path) -> None:
    f = tmp_path / "x.sources"
    f.write_text("Types: deb\nURIs: http://off.example/\nSuites: bookworm\nEnabled: no\n")
    assert apt_mirror.deb822_entries(str(f)) == []


def test_one_line_format(tmp_path: Path) -> None:
    f = tmp_path / "sources.list"
    f.write_text(
        "# comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main\ndeb-src x y z\n"
    )
    assert apt_mirror.one_line_entries(str(f)) == [(["http://mirror.example/debian"], ["bookworm"])]
