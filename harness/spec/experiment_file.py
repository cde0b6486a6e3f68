"""An experiment file as the harness loads it: read and parsed (harness.spec.load), every
cell of its matrix expanded and checked (harness.spec.matrix), and a command pipeline's
program found on this machine (harness.spec.programs). Apart from `load`, on which the
matrix builds: the two would otherwise import each other."""

from __future__ import annotations

from pathlib import Path

from harness.spec.load import SpecError, parse_spec, read_yaml, with_command_cwd
from harness.spec.matrix import expand_cells
from harness.spec.models import Spec
from harness.spec.programs import program_problems


def load_spec(path: Path | str, *, programs: bool = True) -> Spec:
    """The file's spec; its matrix is expanded once so that every cell is checked now, and
    (`programs`) a command pipeline's program is found on this machine (harness.spec.programs;
    `verify` reads a result folder's spec.yaml without: the program ran elsewhere)."""
    path = Path(path)
    spec = with_command_cwd(parse_spec(read_yaml(path), str(path)), path.parent)
    cells = expand_cells(spec, str(path))
    if programs:
        found = dict.fromkeys(p for cell in cells for p in program_problems(cell.spec))
        if found:
            raise SpecError([f"{path}: {key}: {why}" for key, why in found])
    return spec
