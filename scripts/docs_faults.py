"""docs/adding-a-fault.md's generated parts, read from the code so they cannot drift from it.

* the flag table: every class variable `FaultKind` declares (harness/faults/kind.py), its
  default as written there and its meaning from the comment on its line (a flag without one
  is an error: the comment is where its meaning is written once);
* the kind table: every kind of `ALL_KINDS` (harness/faults/registry.py) with its module,
  flags, options, and the modules outside harness/faults/ that name its class (a module that
  knows a kind by name is one a kind like it would need edited too);
* the worked example's registry snippet and misspelt-kind error, with the example kind
  placed where a new cluster kind goes: after the last kind the cluster plays.

`scripts/docs_generated.py` writes them between the page's markers.
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

from harness.faults.drawing import Drawing
from harness.faults.kind import FaultKind
from harness.faults.registry import ALL_KINDS, SPEC_KINDS

# Class variables of FaultKind that are not flags a kind sets: `own_options` is computed
# from the kind's fields (FaultKind.__pydantic_init_subclass__).
DERIVED = ("own_options",)
# Flags with a column of their own in the kind table; the others are listed when set.
COLUMNS = ("name", "aliases", "target_style", "operation", "plays", "modes")
EXAMPLE = ("CutListener", "cut-listener")  # the page's worked example: its class and word


@dataclass(frozen=True)
class Flag:
    name: str
    default: str | None  # the default as kind.py writes it; None: a kind must set it
    meaning: str  # the comment on its line in kind.py


def _comments(source: str) -> dict[int, str]:
    """Line number (1-based, in `source`) -> the comment on that line, without its `#`."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#").strip()
    return out


def flags(kind: type[FaultKind] = FaultKind) -> list[Flag]:
    """The class variables a fault kind may set, in the order `kind` declares them."""
    source = textwrap.dedent(inspect.getsource(kind))
    comments = _comments(source)
    cls = ast.parse(source).body[0]
    assert isinstance(cls, ast.ClassDef)
    out: list[Flag] = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if "ClassVar" not in ast.unparse(stmt.annotation) or stmt.target.id in DERIVED:
            continue
        meaning = comments.get(stmt.end_lineno or stmt.lineno, "")
        if not meaning:
            raise ValueError(f"{kind.__name__}.{stmt.target.id}: no comment saying what it means")
        default = None if stmt.value is None else ast.get_source_segment(source, stmt.value)
        out.append(Flag(stmt.target.id, default, meaning))
    declared = {f.name for f in out} | set(DERIVED)
    missing = sorted(set(kind.__class_vars__) - declared - {"model_config"})
    if missing:  # declared some other way than `name: ClassVar[...] = ...  # meaning`
        raise ValueError(f"{kind.__name__}: class variables not read: {', '.join(missing)}")
    return out


def flag_table() -> str:
    lines = ["| flag | default | meaning |", "|---|---|---|"]
    for f in flags():
        default = "(required)" if f.default is None else f"`{f.default}`"
        lines.append(f"| `{f.name}` | {default} | {_cell(f.meaning)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _value(value: object) -> str:
    if isinstance(value, Drawing):  # the roles it is drawn on
        return ", ".join(value.roles) + ("" if value.by_default else " (not by default)")
    if isinstance(value, tuple):  # a class (a capability a kind needs) by its name
        return ", ".join(getattr(v, "__name__", str(v)) for v in value)
    return str(value)


def _set_flags(kind: type[FaultKind]) -> list[str]:
    """The flags without a column whose value differs from FaultKind's default."""
    out = []
    for f in flags():
        if f.name in COLUMNS or f.default is None:
            continue
        value = getattr(kind, f.name)
        if value != getattr(FaultKind, f.name):
            out.append(f"`{f.name}`" if value is True else f"`{f.name}: {_value(value)}`")
    return out


def _code_names(root: Path) -> dict[str, set[str]]:
    """Module path under root -> every name its code uses (names, attributes, imports), for
    the modules of harness/ outside harness/faults/."""
    out: dict[str, set[str]] = {}
    for path in sorted((root / "harness").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("harness/faults/"):
            continue
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.name.rsplit(".", 1)[-1])
        out[rel] = names
    return out


def kind_table(root: Path) -> str:
    """One row per kind, in ALL_KINDS's order (the order of the spec's list of words)."""
    used = _code_names(root)
    lines = [
        "| kind | module | target | played by | modes | options | other flags set "
        "| named outside harness/faults/ in |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k in ALL_KINDS:
        word = f"`{k.name}`" + "".join(f" (`{a}`)" for a in k.aliases)
        module = k.__module__.replace(".", "/") + ".py"
        target: str = k.target_style if k.plays == "cluster" else "the process"
        target += " (own rule)" if k.target_problem is not FaultKind.target_problem else ""
        target += ", an operation" if k.operation else ""
        options = ", ".join(f"`{o}`" for o in k.own_options) or "-"
        named = ", ".join(f"`{m}`" for m, names in used.items() if k.__name__ in names)
        cells = [
            word,
            f"`{module}`",
            target,
            k.plays,
            ", ".join(k.modes),
            options,
            ", ".join(_set_flags(k)) or "-",
            named or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _example_at() -> int:
    """Where the example kind goes in ALL_KINDS: after the last kind the cluster plays."""
    return max(i for i, k in enumerate(ALL_KINDS) if k.plays == "cluster") + 1


def registry_snippet() -> str:
    """Step 2's code: ALL_KINDS with the example kind in its place, abridged around it."""
    at = _example_at()
    first, before, after = ALL_KINDS[0], ALL_KINDS[at - 1], ALL_KINDS[at]
    body = [first.__name__, "...", before.__name__, EXAMPLE[0], after.__name__, "..."]
    lines = [
        "```python",
        "from harness.faults.cut_listener import CutListener",
        "",
        "ALL_KINDS: tuple[type[FaultKind], ...] = (",
        *(f"    {name}," if name != "..." else "    ..." for name in body),
        ")",
        "```",
    ]
    return "\n".join(lines) + "\n"


def misspelt_kind_error() -> str:
    """What `validate` says of `kind: cut-listner` once the example kind is registered."""
    at = _example_at()
    words = [w for k in ALL_KINDS[:at] for w in (k.name, *k.aliases)]
    words.append(EXAMPLE[1])
    words += [w for k in ALL_KINDS[at:] for w in (k.name, *k.aliases)]
    message = (
        f"error: typo.yaml: faults[0].kind: expected one of {', '.join(words)} (got 'cut-listner')"
    )
    wrapped = textwrap.fill(message, width=96, break_on_hyphens=False)
    return f"```text\n{wrapped}\n```\n"


def drawing_table(root: Path | None = None) -> str:
    """docs/exploring.md's table of what explore draws: each drawn kind's roles, the options
    its module draws (its `drawn_options` docstring), the target it picks itself (its
    `drawn_target` docstring) and whether the next trial needs a fresh cluster after it."""

    def doc(kind: type[FaultKind], name: str) -> str:
        method = kind.__dict__.get(name)
        text = inspect.getdoc(method.__func__) if method is not None else None
        return " ".join((text or "-").split()).replace("|", "\\|")

    lines = [
        "| kind | roles | options drawn | target picked | next trial |",
        "|---|---|---|---|---|",
    ]
    for name, kind in SPEC_KINDS.items():
        if kind.drawing is None:
            continue
        roles = ", ".join(kind.drawing.roles)
        if not kind.drawing.by_default:
            roles += " (not by default)"
        fresh = "fresh cluster" if kind.changes_cluster else "may reuse"
        if name == "kill":
            fresh = "may reuse (fresh after `wipe`, never drawn)"
        options, target = doc(kind, "drawn_options"), doc(kind, "drawn_target")
        lines.append(f"| `{name}` | {roles} | {options} | {target} | {fresh} |")
    never = [f"`{n}`" for n, k in SPEC_KINDS.items() if k.drawing is None]
    lines += ["", f"Never drawn: {', '.join(never)} (they change the cell's own subject)."]
    return "\n".join(lines) + "\n"
