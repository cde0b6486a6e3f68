"""Experiment specs: typed models, YAML loading with precise errors, and matrix expansion.

A package face loaded on first use (PEP 562): a process that parses one sub-model
(harness.spec.producer) imports this package without the models, so without harness.faults
(import-linter contract "light-processes"; tests/unit/test_producer_process.py checks it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.spec.expect import ALLOWED_METRICS, Bound, parse_bound
    from harness.spec.experiment_file import load_spec
    from harness.spec.load import SpecError, choose_seed, parse_spec, spec_to_yaml
    from harness.spec.matrix import Cell, excluded_combinations, expand_cells, filter_cells
    from harness.spec.models import (
        ClusterSpec,
        CommandPipelineSpec,
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

# Where each name of the face is defined (a module of this package).
_WHERE = {
    "ALLOWED_METRICS": "expect",
    "Bound": "expect",
    "Cell": "matrix",
    "ClusterSpec": "models",
    "CommandPipelineSpec": "models",
    "FaultSpec": "models",
    "GroupConsumerSpec": "models",
    "Matrix": "models",
    "Override": "models",
    "PipelineSpec": "models",
    "ProducerSpec": "models",
    "RecoverySpec": "models",
    "SparkConsumerSpec": "models",
    "Spec": "models",
    "SpecError": "load",
    "TopicSpec": "models",
    "choose_seed": "load",
    "excluded_combinations": "matrix",
    "expand_cells": "matrix",
    "filter_cells": "matrix",
    "impossible_cluster": "problems",
    "load_spec": "experiment_file",
    "parse_bound": "expect",
    "parse_spec": "load",
    "resolve_path": "paths",
    "spec_to_yaml": "load",
}

__all__ = [
    "ALLOWED_METRICS",
    "Bound",
    "Cell",
    "ClusterSpec",
    "CommandPipelineSpec",
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


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
