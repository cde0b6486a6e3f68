"""Experiment specs: typed models, YAML loading with precise errors, and matrix expansion."""

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
