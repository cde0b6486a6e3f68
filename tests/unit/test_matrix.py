"""Matrix expansion: count, order, ids, free-form paths, expect overrides, per-cell rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import ConfigError
from harness.spec import (
    Bound,
    Cell,
    SpecError,
    excluded_combinations,
    expand_cells,
    filter_cells,
    load_spec,
    parse_spec,
    resolve_path,
)

DEFAULT_MATRIX = Path(__file__).parents[2] / "experiments" / "default-matrix.yaml"


def cells_of(text: str) -> list[Cell]:
    return expand_cells(parse_spec(yaml.safe_load(text), "m.yaml"), "m.yaml")


def spec_errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        cells_of(text)
    return info.value.lines


THREE_AXES = """
name: m
producer: {duration_s: 10}
expect: {lost: 0, max_stall_s: "< 30"}
matrix:
  producer.acks: [0, 1, all]
  cluster.broker_config.offsets.topic.replication.factor: [1, 3]
  cluster.mode: [kraft, zookeeper]
  expect:
    - when: {producer.acks: [0, 1]}
      expect: {lost: null}
    - when: {cluster.broker_config.offsets.topic.replication.factor: 1}
      expect: {max_stall_s: ">= 5"}
    - when: {producer.acks: all, cluster.mode: zookeeper}
      expect: {duplicated: 0}
"""


def test_no_matrix_is_one_main_cell() -> None:
    [cell] = cells_of("name: a\nproducer: {records: 5}\nexpect: {lost: 0, duplicated: null}\n")
    assert cell.id == "01_main" and cell.params == {}
    assert cell.spec.matrix is None
    assert cell.spec.expect == {"lost": Bound("==", 0)}


def test_cartesian_product_first_key_slowest() -> None:
    cells = cells_of(THREE_AXES)
    assert len(cells) == 12
    assert [c.id for c in cells[:3]] == [
        "01_acks=0_offsets.topic.replication.factor=1_mode=kraft",
        "02_acks=0_offsets.topic.replication.factor=1_mode=zookeeper",
        "03_acks=0_offsets.topic.replication.factor=3_mode=kraft",
    ]
    assert cells[-1].id == "12_acks=all_offsets.topic.replication.factor=3_mode=zookeeper"
    assert cells[-1].params == {
        "producer.acks": "all",
        "cluster.broker_config.offsets.topic.replication.factor": 3,
        "cluster.mode": "zookeeper",
    }
    assert [c.spec.producer.acks for c in cells] == ["0"] * 4 + ["1"] * 4 + ["all"] * 4


def test_free_form_key_is_the_rest_of_the_path() -> None:
    cells = cells_of(THREE_AXES)
    assert cells[0].spec.cluster.broker_config == {"offsets.topic.replication.factor": 1}
    assert cells[0].spec.cluster.mode == "kraft"
    assert cells[1].spec.cluster.mode == "zookeeper"
    assert all(c.spec.matrix is None for c in cells)


def test_overrides_apply_in_order_and_null_removes_a_bound() -> None:
    by_id = {c.id[:2]: c.spec.expect for c in cells_of(THREE_AXES)}
    assert by_id["01"] == {"max_stall_s": Bound(">=", 5)}  # acks 0, offsets RF 1
    assert by_id["03"] == {"max_stall_s": Bound("<", 30)}  # acks 0, offsets RF 3
    assert by_id["09"] == {"lost": Bound("==", 0), "max_stall_s": Bound(">=", 5)}
    assert by_id["12"] == {
        "lost": Bound("==", 0),
        "max_stall_s": Bound("<", 30),
        "duplicated": Bound("==", 0),
    }


def test_idempotence_follows_acks_per_cell() -> None:
    cells = cells_of(THREE_AXES)
    assert {c.spec.producer.acks: c.spec.producer.idempotence for c in cells} == {
        "0": False,
        "1": False,
        "all": True,
    }


def test_explicit_idempotence_fails_the_acks_0_and_1_cells_by_name() -> None:
    lines = spec_errors(
        "name: m\nproducer: {records: 5, enable_idempotence: true}\n"
        "matrix: {producer.acks: [0, 1, all]}\n"
    )
    assert lines == [
        "m.yaml: producer.enable_idempotence (cell 01_acks=0): true needs acks=all "
        "(librdkafka refuses idempotence otherwise) (got acks=0)",
        "m.yaml: producer.enable_idempotence (cell 02_acks=1): true needs acks=all "
        "(librdkafka refuses idempotence otherwise) (got acks=1)",
    ]


def test_bad_axis_value_is_reported_on_the_matrix_key() -> None:
    lines = spec_errors("name: m\nproducer: {records: 5}\nmatrix: {cluster.brokers: [3, 9]}\n")
    assert lines == ["m.yaml: matrix.cluster.brokers (cell 02_brokers=9): expected <= 5 (got 9)"]


def test_problem_in_every_cell_is_reported_once_without_cells() -> None:
    lines = spec_errors(
        "name: m\nproducer: {records: 5}\ntopic: {replication_factor: 4}\n"
        "matrix: {producer.acks: [1, all]}\n"
    )
    assert lines == ["m.yaml: topic.replication_factor: expected <= cluster.brokers (3) (got 4)"]


def test_a_cell_may_complete_an_invalid_base() -> None:
    cells = cells_of(
        "name: m\nproducer: {records: 5}\ncluster: {brokers: 1}\ntopic: {replication_factor: 3}\n"
        "matrix: {cluster.brokers: [3, 5]}\n"
    )
    assert [c.spec.cluster.brokers for c in cells] == [3, 5]


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("producer.acks", ("producer", "acks")),
        ("cluster.broker_config.a.b.c", ("cluster", "broker_config", "a.b.c")),
        ("topic.config.retention.ms", ("topic", "config", "retention.ms")),
        ("producer.config.linger.ms", ("producer", "config", "linger.ms")),
        ("consumer.config.session.timeout.ms", ("consumer", "config", "session.timeout.ms")),
        ("consumer.trigger_ms", ("consumer", "trigger_ms")),
        ("consumers.1.members", ("consumers", 1, "members")),
        ("faults.0.duration_s", ("faults", 0, "duration_s")),
        ("expect.stall_s.group", ("expect", "stall_s.group")),
        ("faults", ("faults",)),
    ],
)
def test_resolve_path(path: str, segments: tuple[Any, ...]) -> None:
    assert resolve_path(path) == segments


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("producer.ackz", "producer has no field 'ackz'"),
        ("cluster.mode.x", "cluster.mode is a single value"),
        ("faults.first.at_s", "expected a list index"),
        ("matrix.x", "the top level has no field 'matrix'"),
        ("nope", "the top level has no field 'nope'"),
    ],
)
def test_unknown_paths(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_path(path)


def test_matrix_errors_name_the_matrix_key() -> None:
    lines = spec_errors(
        "name: m\nproducer: {records: 5}\n"
        "matrix:\n  producer.ackz: [0]\n  topic.partitions: []\n  faults.0.at_s: [1]\n"
    )
    assert lines[0].startswith("m.yaml: matrix.producer.ackz: unknown path: producer has no field")
    assert lines[1] == "m.yaml: matrix.topic.partitions: expected a non-empty list of values"
    assert lines[2] == "m.yaml: matrix.faults.0.at_s: index 0 is beyond the spec's list of 0"


def test_when_must_name_an_axis_and_one_of_its_values() -> None:
    lines = spec_errors(
        "name: m\nproducer: {records: 5}\nmatrix:\n  producer.acks: [0, all]\n  expect:\n"
        "    - {when: {cluster.mode: kraft}, expect: {lost: 0}}\n"
        "    - {when: {producer.acks: 1}, expect: {lost: 0}}\n"
    )
    assert lines == [
        "m.yaml: matrix.expect[0].when.cluster.mode: not a matrix axis; axes: producer.acks",
        "m.yaml: matrix.expect[1].when.producer.acks: 1 is not a value of this axis (0, all)",
    ]


def test_override_expect_is_validated() -> None:
    with pytest.raises(
        SpecError, match=r"m.yaml: matrix.expect\[0\].expect.lost: expected a number"
    ):
        cells_of(
            "name: m\nproducer: {records: 5}\nmatrix:\n  producer.acks: [0]\n  expect:\n"
            "    - {when: {producer.acks: 0}, expect: {lost: lots}}\n"
        )


def test_override_with_unknown_metric_fails_in_cells() -> None:
    lines = spec_errors(
        "name: m\nproducer: {records: 5}\nmatrix:\n  producer.acks: [0]\n  expect:\n"
        "    - {when: {producer.acks: 0}, expect: {lots: 0}}\n"
    )
    assert lines[0].startswith("m.yaml: expect.lots: unknown metric")


def test_consumer_axis_without_consumer_section_and_nonscalar_values() -> None:
    cells = cells_of(
        "name: m\nproducer: {records: 5}\nmatrix:\n  consumer.commit: [auto, before-process]\n"
        "  faults:\n    - []\n    - [{at_s: 1, kind: kill, target: random}]\n"
    )
    assert [c.id for c in cells] == [
        "01_commit=auto_faults=v1",
        "02_commit=auto_faults=v2",
        "03_commit=before-process_faults=v1",
        "04_commit=before-process_faults=v2",
    ]
    assert cells[3].spec.consumer_sets()[0][1].commit == "before-process"  # type: ignore[union-attr]
    assert len(cells[3].spec.faults) == 1


def test_clashing_short_names_use_the_full_key() -> None:
    cells = cells_of(
        "name: m\nproducer: {records: 5}\nfaults: [{at_s: 1, kind: kill}]\n"
        "matrix:\n  producer.config.x: [a]\n  topic.config.x: [b]\n  faults.0.at_s: [1]\n"
    )
    assert cells[0].id == "01_producer.config.x=a_topic.config.x=b_at_s=1"


def test_ids_are_folder_safe() -> None:
    cells = cells_of(
        "name: m\nproducer: {records: 5}\nfaults: [{at_s: 1, kind: kill}]\n"
        "matrix: {faults.0.target: ['leader-of:chaos/0', 'broker:2']}\n"
    )
    assert [c.id for c in cells] == ["01_target=leader-of-chaos-0", "02_target=broker-2"]


def test_too_many_cells() -> None:
    axis = list(range(30))
    text = yaml.safe_dump(
        {
            "name": "m",
            "producer": {"records": 5},
            "matrix": {
                "producer.rate": [r + 1 for r in axis],
                "producer.record_size": [100 + r for r in axis],
            },
        }
    )
    with pytest.raises(SpecError, match="900 cells; at most 500"):
        cells_of(text)


def test_default_matrix_file() -> None:
    cells = expand_cells(load_spec(DEFAULT_MATRIX))
    pairs = [(c.spec.producer.acks, c.params[RF]) for c in cells]
    assert pairs == [
        (a, rf) for a, rf in [("0", 1), ("1", 3), ("all", 1), ("all", 3)] for _ in "kz"
    ]
    by_id = {c.id[:2]: c for c in cells}
    rf1_all = by_id["05"]
    assert rf1_all.id == "05_acks=all_offsets.topic.replication.factor=1_mode=kraft"
    stall_rf1 = Bound(">=", 0.0, "faults.1.duration_s", 0.55)
    assert rf1_all.spec.expect == {"lost": Bound("==", 0), "stall_s.group": stall_rf1}
    acks1_rf3 = by_id["03"]
    stall_rf3 = Bound("<", 0.0, "faults.1.duration_s", 0.75)  # each >= 30 % from its figures
    assert acks1_rf3.spec.expect == {"lost": Bound(">=", 1), "stall_s.group": stall_rf3}
    assert acks1_rf3.spec.cluster.broker_config["group.initial.rebalance.delay.ms"] == 0
    # The leader isolation never takes the coordinator the second fault is about.
    assert "except coordinator-of" in rf1_all.spec.faults[0].target


RF = "cluster.broker_config.offsets.topic.replication.factor"


@pytest.mark.parametrize(
    ("pattern", "ids"),
    [
        ("acks=all", ["05", "06"]),
        ("mode=zookeeper", ["02", "04", "06"]),
        ("01_*,*_mode=zookeeper", ["01", "02", "04", "06"]),
        ("0?_acks=1*", ["03", "04"]),
        (" 03 , 05_ ", ["03", "05"]),
    ],
)
def test_filter_cells(pattern: str, ids: list[str]) -> None:
    cells = cells_of(
        "name: m\nproducer: {records: 5}\n"
        "matrix: {producer.acks: [0, 1, all], cluster.mode: [kraft, zookeeper]}\n"
    )
    assert [c.id[:2] for c in filter_cells(cells, pattern)] == ids


def test_filter_without_match_lists_the_cells() -> None:
    cells = cells_of("name: m\nproducer: {records: 5}\nmatrix: {producer.acks: [0, 1]}\n")
    with pytest.raises(
        ConfigError, match=r"matches no cell; the cells are:\n  01_acks=0\n  02_acks=1"
    ):
        filter_cells(cells, "acks=all")


EXCLUDED = """
name: m
producer: {duration_s: 10}
expect: {lost: 0}
matrix:
  cluster.mode: [kraft, zookeeper]
  cluster.version: [3.9.1, 4.3.1]
  producer.acks: [1, all]
  exclude:
    - {cluster.mode: zookeeper, cluster.version: 4.3.1}
"""


def test_exclude_leaves_combinations_out_and_numbers_the_rest() -> None:
    cells = cells_of(EXCLUDED)
    assert [(c.spec.cluster.mode, c.spec.cluster.version) for c in cells] == [
        ("kraft", "3.9.1"),
        ("kraft", "3.9.1"),
        ("kraft", "4.3.1"),
        ("kraft", "4.3.1"),
        ("zookeeper", "3.9.1"),
        ("zookeeper", "3.9.1"),
    ]
    assert [c.id[:2] for c in cells] == ["01", "02", "03", "04", "05", "06"]
    spec = parse_spec(yaml.safe_load(EXCLUDED), "m.yaml")
    assert excluded_combinations(spec) == [
        {"cluster.mode": "zookeeper", "cluster.version": "4.3.1", "producer.acks": a}
        for a in (1, "all")
    ]


def test_without_exclude_the_impossible_cell_is_an_error() -> None:
    text = EXCLUDED.split("  exclude:")[0]
    [line] = spec_errors(text)
    assert "cluster.version" in line and "zookeeper" in line


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{cluster.modes: zookeeper}", "matrix.exclude[0].cluster.modes: not a matrix axis"),
        ("{cluster.mode: zk}", "matrix.exclude[0].cluster.mode: 'zk' is not a value"),
        ("{}", "matrix.exclude[0]: expected at least one axis"),
        ("{cluster.mode: [kraft, zookeeper]}", "matrix.exclude: every cell is excluded"),
    ],
)
def test_bad_exclude_entries_are_named(entry: str, message: str) -> None:
    text = EXCLUDED.split("  exclude:")[0] + f"  exclude: [{entry}]\n"
    assert any(message in line for line in spec_errors(text))
