"""Experiment specs: typed models, YAML loading with precise errors, and matrix expansion.

The names below load on first use (PEP 562): a member process imports its own sub-model
(harness.spec.consumers) without this package pulling in the whole spec, whose fault
vocabulary imports harness.faults (import-linter contract "light-processes")."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.spec.expect import ALLOWED_METRICS, Bound, parse_bound
    from harness.spec.load import SpecError, choose_seed, load_spec, parse_spec, spec_to_yaml
    from harness.spec.matrix import Cell, excluded_combinations, expand_cells, filter_cells
    from harness.spec.models import (
        ClusterSpec,
        FaultSpec,
        GroupConsumerSpec,
        Matrix,
        Override,
        PipelineSpec,
        ProducerSpec,
        RecoverySpec,
        SparkConsumerSpec,
        Spec,
        TopicSpec,
    )
    from harness.spec.paths import resolve_path
    from harness.spec.problems import impossible_cluster

__all__ = [
    "ALLOWED_METRICS",
    "Bound",
    "Cell",
    "ClusterSpec",
    "FaultSpec",
    "GroupConsumerSpec",
    "Matrix",
    "Override",
    "PipelineSpec",
    "ProducerSpec",
    "RecoverySpec",
    "SparkConsumerSpec",
    "Spec",
    "SpecError",
    "TopicSpec",
    "choose_seed",
    "excluded_combinations",
    "expand_cells",
    "filter_cells",
    "impossible_cluster",
    "load_spec",
    "parse_bound",
    "parse_spec",
    "resolve_path",
    "spec_to_yaml",
]


def __getattr__(name: str) -> Any:
    """The whole spec loads on the first name asked of the package (as it did eagerly)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module in ("expect", "load", "matrix", "models", "paths", "problems"):
        found = import_module(f"{__name__}.{module}")
        if hasattr(found, name):
            globals()[name] = value = getattr(found, name)  # later lookups skip this function
            return value
    raise AttributeError(name)
