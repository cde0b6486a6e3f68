"""Print the Debian mirror the host's apt uses for its own release.

debootstrap must use the same mirror as the host (the only one reachable on
locked-down machines), and that address must never be written into the repo.
"""

from __future__ import annotations

import glob
import os
import sys


def codename() -> str:
    with open("/etc/os-release", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"')
    raise SystemExit("apt_mirror: no VERSION_CODENAME in /etc/os-release")


def deb822_entries(path: str) -> list[tuple[list[str], list[str]]]:
    entries: list[tuple[list[str], list[str]]] = []
    with open(path, encoding="utf-8") as f:
        for stanza in f.read().split("\n\n"):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith(("#", " ")):
                    key, value = line.split(":", 1)
                    fields[key.strip().lower()] = value.strip()
            if fields.get("enabled", "yes") != "no" and "deb" in fields.get("types", "").split():
                entries.append((fields.get("uris", "").split(), fields.get("suites", "").split()))
    return entries


def one_line_entries(path: str) -> list[tuple[list[str], list[str]]]:
    entries: list[tuple[list[str], list[str]]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = [w for w in line.split() if not w.startswith("[")]
            if len(words) >= 3 and words[0] == "deb":
                entries.append(([words[1]], [words[2]]))
    return entries


def main() -> None:
    override = os.environ.get("KAFKA_CHAOS_APT_MIRROR")
    if override:
        print(override)
        return
    suite = codename()
    entries: list[tuple[list[str], list[str]]] = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        entries += deb822_entries(path)
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        if os.path.exists(path):
            entries += one_line_entries(path)
    for uris, suites in entries:
        if suite in suites and uris:
            print(uris[0])
            return
    sys.exit(f"apt_mirror: no apt source for '{suite}' found; set KAFKA_CHAOS_APT_MIRROR")


if __name__ == "__main__":
    main()
