"""Read an experiment file into a `Spec`, or fail naming the file, the key path and the need."""

from __future__ import annotations

import itertools
import random
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from harness.errors import ConfigError
from harness.faults.registry import OPTION_NAMES, SPEC_KEYS
from harness.spec.consumers import (
    CONSUMER_KIND_ERROR,
    CONSUMER_TAGS,
    PIPELINE_KIND_ERROR,
    PIPELINE_MODELS,
    PIPELINE_TAGS,
    SET_MODELS,
    CommandPipelineSpec,
    kind_word,
)
from harness.spec.expect import format_number
from harness.spec.explore import ExploreSpec, QuietSpec
from harness.spec.models import (
    FAULT_TAGS,
    ClusterSpec,
    Override,
    ProducerSpec,
    RecoverySpec,
    Spec,
    TopicSpec,
)

MAX_SEED = 2**31 - 1  # what a run without a seed draws (any seed up to SEED_MAX is taken)
MAX_SPEC_BYTES = 4 * 1024 * 1024  # the largest shipped spec is a few KiB; more is not a spec
_MAX_LINES = 25


class SpecError(ConfigError):
    """An experiment file is wrong; one line per problem, each `file: key.path: expected …`."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        shown = self.lines[:_MAX_LINES]
        if len(self.lines) > _MAX_LINES:
            shown.append(f"... and {len(self.lines) - _MAX_LINES} more")
        super().__init__("\n".join(shown))


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; in a spec that hides a mistake."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"a key must be a plain value, not {type(key).__name__}",
                key_node.start_mark,
            ) from None
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def read_yaml(path: Path) -> Any:
    """The YAML data of a spec or suite file; SpecError naming the file for anything that is
    not a readable, bounded UTF-8 YAML document (never a traceback)."""
    text = _read_text(path)
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except RecursionError:
        raise SpecError([f"{path}: YAML nested too deeply"]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise SpecError([f"{where}: YAML syntax error: {exc.problem or exc}"]) from None
    except yaml.YAMLError as exc:
        raise SpecError([f"{path}: YAML syntax error: {exc}"]) from None


def _read_text(path: Path) -> str:
    """At most MAX_SPEC_BYTES of UTF-8 from a regular file (a FIFO or /dev/zero would block
    or never end; a huge file would exhaust memory before YAML could say anything)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SpecError([f"{path}: no such experiment file"]) from None
    except OSError as exc:
        raise SpecError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    if stat.S_ISDIR(info.st_mode):
        raise SpecError([f"{path}: is a folder, not an experiment file"])
    if not stat.S_ISREG(info.st_mode):
        raise SpecError([f"{path}: not a regular file (a device, FIFO or socket)"])
    if info.st_size > MAX_SPEC_BYTES:
        raise SpecError([f"{path}: {info.st_size} bytes; a spec file is at most {MAX_SPEC_BYTES}"])
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    if len(raw) > MAX_SPEC_BYTES:  # grew since stat
        raise SpecError([f"{path}: larger than {MAX_SPEC_BYTES} bytes; not a spec file"])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [f"{path}: not UTF-8 text (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"]
        ) from None


def with_command_cwd(spec: Spec, folder: Path) -> Spec:
    """A command pipeline's `cwd` made absolute: relative to the experiment file's folder,
    which is also the default (the program sits beside its experiment, wherever the harness
    runs from). The result folder's spec.yaml then names the folder it ran in."""
    p = spec.pipeline
    if not isinstance(p, CommandPipelineSpec):
        return spec
    cwd = (folder / (p.cwd or ".")).resolve()
    return spec.model_copy(update={"pipeline": p.model_copy(update={"cwd": str(cwd)})})


def parse_spec(data: Any, source: str = "<spec>") -> Spec:
    """Typed spec from YAML data (shapes and types; rules across fields are per cell)."""
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        raise SpecError([f"{source}: expected a mapping of experiment keys (got {got})"])
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError([f"{source}: {p}: {m}" for p, m in validation_problems(exc)]) from None


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """Pydantic's errors as (key path, what was expected)."""
    return [(loc_to_path(e["loc"]), _message(e)) for e in _in_key_order(exc.errors())]


def _in_key_order(errors: list[Any]) -> list[Any]:
    """A fault's errors in the order of SPEC_KEYS: its kind's model checks the kind's own
    options before the other kinds' (harness.faults.registry.every_option)."""
    rank = {key: i for i, key in enumerate(SPEC_KEYS)}

    def fault_of(e: Any) -> tuple[Any, ...] | None:
        loc = e["loc"]
        return tuple(loc[:3]) if len(loc) > 3 and _is_fault_tag(loc, 2) else None

    out: list[Any] = []
    for fault, run in itertools.groupby(errors, key=fault_of):
        items = list(run)
        if fault is not None:
            items.sort(key=lambda e: rank.get(e["loc"][3], len(rank)))
        out += items
    return out


def loc_to_path(loc: Sequence[int | str]) -> str:
    """('faults', 1, 'kill', 'target') -> 'faults[1].target', dropping consumer and fault
    kind tags."""
    out = ""
    for i, seg in enumerate(loc):
        if _is_tag(loc, i) or seg == "[key]":  # a mapping's key itself: the key's own path
            continue
        if isinstance(seg, int):
            out += f"[{seg}]"
        else:
            out += f".{seg}" if out else str(seg)
    return out or "(top level)"


def _is_tag(loc: Sequence[int | str], i: int) -> bool:
    if i == 1 and loc[0] == "matrix" and loc[1] == "axes":
        return True  # the model's name for the flat axis mapping
    if _is_fault_tag(loc, i):
        return True
    if i == 1 and loc[0] == "pipeline" and loc[1] in PIPELINE_TAGS:
        return True
    if loc[i] not in CONSUMER_TAGS:
        return False
    return (i == 1 and loc[0] == "consumer") or (
        i == 2 and loc[0] == "consumers" and isinstance(loc[1], int)
    )


def _is_fault_tag(loc: Sequence[int | str], i: int) -> bool:
    """The kind pydantic names after faults[i] (the model that parsed the fault)."""
    return i == 2 and loc[0] == "faults" and isinstance(loc[1], int) and loc[i] in FAULT_TAGS


def _got(e: Any) -> str:
    value = e.get("input")
    if isinstance(value, dict | list):
        return f" (got a {'mapping' if isinstance(value, dict) else 'list'})"
    return f" (got {short_repr(value)})"


def short_repr(value: Any, limit: int = 60) -> str:
    """repr cut to `limit` characters: a hostile 10,000-digit number stays one short line."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _message(e: Any) -> str:
    kind, ctx = e["type"], e.get("ctx") or {}
    if kind == "extra_forbidden":
        allowed = _allowed_keys(e["loc"][:-1])
        return "unknown key" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
    if kind == "missing":
        return "required key missing"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"expected one of {expected}{_got(e)}"
    simple = {
        "int_type": "expected an integer",
        "int_parsing": "expected an integer",
        "int_from_float": "expected an integer",
        "float_type": "expected a number",
        "float_parsing": "expected a number",
        "finite_number": "expected a finite number",
        "bool_type": "expected true or false",
        "bool_parsing": "expected true or false",
        "string_type": "expected a string",
        "dict_type": "expected a mapping",
        "list_type": "expected a list",
        "model_type": "expected a mapping",
        "model_attributes_type": "expected a mapping",
    }
    if kind in simple:
        return simple[kind] + _got(e)
    bounds = {
        "greater_than": ">",
        "greater_than_equal": ">=",
        "less_than": "<",
        "less_than_equal": "<=",
    }
    if kind in bounds:
        limit = next(iter(ctx.values()))
        # ints exactly (2**63 - 1 is not 9223372036854775808), floats as format_number does
        shown = (
            str(limit)
            if isinstance(limit, int)
            else format_number(limit)
            if isinstance(limit, float)
            else limit
        )
        return f"expected {bounds[kind]} {shown}{_got(e)}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        if pattern.startswith("^[A-Za-z_]"):
            return f"expected a variable name: letters, digits and '_', not a digit first{_got(e)}"
        if "A-Za-z0-9" in pattern:
            return f"expected letters, digits, '.', '_' or '-' only{_got(e)}"
        return f"expected the form X.Y.Z, e.g. 3.9.2{_got(e)}"
    if kind == "too_short":
        return f"expected at least {ctx.get('min_length', 1)} item(s){_got(e)}"
    if kind == "string_too_short":
        return f"expected a non-empty string{_got(e)}"
    if kind == "value_error":
        return str(e["msg"]).removeprefix("Value error, ")
    if kind == "consumer_kind":
        return f"{CONSUMER_KIND_ERROR}{_got_kind(e)}"
    if kind == "pipeline_kind":
        return f"{PIPELINE_KIND_ERROR}{_got_kind(e)}"
    return f"{e['msg']}{_got(e)}"


def _got_kind(e: Any) -> str:
    value = e.get("input")
    if isinstance(value, dict) and "kind" in value:
        return f" (got {value['kind']!r})"
    return _got(e)


_BY_NAME: dict[str, type[BaseModel]] = {
    "cluster": ClusterSpec,
    "topic": TopicSpec,
    "producer": ProducerSpec,
    "recovery": RecoverySpec,
    "explore": ExploreSpec,
    "quiet": QuietSpec,
    **{kind_word(model): model for model in SET_MODELS},  # a consumer set, by its kind
}
_PIPELINE_BY_NAME: dict[str, type[BaseModel]] = {kind_word(m): m for m in PIPELINE_MODELS}


def _allowed_keys(parent: Sequence[int | str]) -> list[str]:
    """The keys the mapping at `parent` takes (for 'unknown key' messages)."""
    model: type[BaseModel] | None
    if not parent:
        model = Spec
    elif _is_fault_tag(parent, len(parent) - 1):
        return list(SPEC_KEYS)  # every kind parses every option (its rules refuse others')
    elif isinstance(parent[-1], int) and len(parent) >= 2:
        items: dict[str, type[BaseModel]] = {"expect": Override}
        model = items.get(str(parent[-2]))
    elif parent[-1] == "matrix":
        return []
    elif parent[0] == "pipeline":  # the tag is dropped from the path, not from `loc`
        model = _PIPELINE_BY_NAME.get(str(parent[-1]), _PIPELINE_BY_NAME[PIPELINE_TAGS[0]])
    else:
        model = _BY_NAME.get(str(parent[-1]))
    return list(model.model_fields) if model is not None else []


def choose_seed() -> int:
    """A fresh seed for a run that gave none (printed and stored so the run can be repeated)."""
    return random.SystemRandom().randint(0, MAX_SEED)


def spec_to_yaml(spec: Spec, seed: int) -> str:
    """The spec with every default spelled out and the seed set; loads back to the same cells."""
    data = spec.model_dump(mode="json")
    data["seed"] = seed
    for key in ("consumer", "consumers", "matrix", "explore"):
        if data.get(key) is None:
            data.pop(key, None)
    options = set(OPTION_NAMES)
    data["faults"] = [  # a kind's options only, not every kind's unset ones, in SPEC_KEYS order
        {k: fault[k] for k in SPEC_KEYS if k in fault and not (k in options and fault[k] is None)}
        for fault in data["faults"]
    ]
    header = f"# {spec.name}: expanded by kafka-chaos (defaults filled in), seed {seed}\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
