"""MkDocs hooks (mkdocs.yml `hooks:`): the site ships the experiment files it links to.

The incident catalogue and the shipped-experiments table link each row to its YAML file
(`experiments/incidents/x.yaml`, the same links as in README.md). Those files live outside
docs/, so this hook adds every `experiments/**/*.yaml` to the site at the same relative path:
the links resolve, `mkdocs build --strict` checks each one, and the site can be read offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any, **_: Any) -> Files:
    root = Path(config["config_file_path"]).resolve().parent
    for path in sorted((root / "experiments").rglob("*.yaml")):
        rel = path.relative_to(root).as_posix()
        if files.get_file_from_path(rel) is None:
            files.append(
                File(
                    rel,
                    src_dir=str(root),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files
