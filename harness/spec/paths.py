"""Matrix keys as paths through the spec's fields: resolved against the models, applied to YAML data.

`cluster.broker_config.offsets.topic.replication.factor` -> ("cluster", "broker_config",
"offsets.topic.replication.factor"): once a path reaches a free-form mapping the rest is one key.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from harness.spec.models import Spec

Segment = str | int


def resolve_path(path: str) -> tuple[Segment, ...]:
    """Dotted matrix key -> field names / list indexes / one free-form key (ValueError if none)."""
    parts = path.split(".")
    node: Any = Spec
    out: list[Segment] = []
    for i, part in enumerate(parts):
        models = _models(node)
        if models:
            fields = {f for m in models for f in m.model_fields} - {
                "matrix",
                "name",
                "incident",
                "bug",
            }
            if part not in fields:
                where = ".".join(parts[:i]) or "the top level"
                raise ValueError(
                    f"unknown path: {where} has no field {part!r}; fields: {', '.join(sorted(fields))}"
                )
            owner = next(m for m in models if part in m.model_fields)
            node = owner.model_fields[part].annotation
            out.append(part)
        elif _origin(node) is dict:
            out.append(".".join(parts[i:]))
            return tuple(out)
        elif _origin(node) is list:
            if not part.isdigit():
                raise ValueError(f"unknown path: expected a list index at {part!r}")
            out.append(int(part))
            node = get_args(_strip(node))[0]
        else:
            raise ValueError(f"unknown path: {'.'.join(parts[:i])} is a single value")
    return tuple(out)


def _strip(tp: Any) -> Any:
    """Drop Annotated and Optional wrappers."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
            continue
        if _is_union(tp):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) == 1:
                tp = members[0]
                continue
        return tp


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _origin(tp: Any) -> Any:
    return get_origin(_strip(tp))


def _models(tp: Any) -> list[type[BaseModel]]:
    tp = _strip(tp)
    members = [_strip(a) for a in get_args(tp)] if _is_union(tp) else [tp]
    return [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]


def check_reachable(base: dict[str, Any], segments: tuple[Segment, ...]) -> None:
    node: Any = base
    for seg in segments[:-1]:
        node = _step(node, seg)
    if isinstance(segments[-1], int):
        _step(node, segments[-1])


def _step(node: Any, seg: Segment) -> Any:
    if isinstance(seg, int):
        if not isinstance(node, list) or seg >= len(node):
            size = len(node) if isinstance(node, list) else 0
            raise ValueError(f"index {seg} is beyond the spec's list of {size}")
        return node[seg]
    return node.get(seg) if isinstance(node, dict) else None


def set_at(data: dict[str, Any], segments: tuple[Segment, ...], value: Any) -> None:
    node: Any = data
    for seg in segments[:-1]:
        if isinstance(seg, int):
            node = node[seg]
        else:
            if node.get(seg) is None:
                node[seg] = {}  # e.g. consumer.commit without a consumer: section
            node = node[seg]
    node[segments[-1]] = value


def number_at(spec: Spec, path: str) -> float:
    """The number a dotted path names in this spec (a relative bound's reference).

    ValueError naming what is wrong: an unknown path, an index past the list, or a value
    that is unset or not a number (`faults.0.duration_s` of a fault without a duration).
    """
    segments = resolve_path(path)
    node: Any = spec.model_dump(mode="json", exclude={"matrix"})
    for seg in segments:
        node = _step(node, seg)
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise ValueError(f"{path} is {'unset' if node is None else repr(node)}, not a number")
    return float(node)
