"""upgrade without Docker: the version rules (what Kafka allows), the order nodes are rolled
in, and the spec's errors naming the field."""

from __future__ import annotations

from pathlib import Path

from harness.faults.upgrade import NodeInfo, release, step_order, version_problems
from harness.spec import load_spec
from tests.unit.test_spec import errors_of, write

SPEC = """name: x
cluster: {{mode: {mode}, version: {version}, brokers: 3{config}}}
producer: {{records: 100}}
faults: [{fault}]
"""


def spec_errors(
    tmp_path: Path, fault: str, mode: str = "kraft", version: str = "3.9.2", config: str = ""
) -> list[str]:
    text = SPEC.format(fault=fault, mode=mode, version=version, config=config)
    return errors_of(tmp_path, text)


def test_kraft_upgrades_and_same_line_downgrades_are_allowed() -> None:
    assert version_problems("kraft", "3.9.2", "4.3.1", True, {}) == []
    assert version_problems("kraft", "3.9.2", "4.3.1", False, {}) == []
    assert version_problems("kraft", "4.3.1", "4.3.0", False, {}) == []
    assert version_problems("kraft", "3.8.1", "3.9.2", True, {}) == []


def test_kraft_never_runs_software_older_than_its_metadata_version() -> None:
    [(key, why)] = version_problems("kraft", "4.3.1", "3.9.2", False, {})
    assert key == "to_version" and "metadata.version 4.3" in why and "within 4.3.x" in why
    [(key, why)] = version_problems("kraft", "4.3.1", "4.3.0", True, {})
    assert key == "finalize" and "downgrade cannot finalize" in why


def test_nothing_to_do_and_a_malformed_version_are_errors() -> None:
    [(key, why)] = version_problems("kraft", "3.9.2", "3.9.2", False, {})
    assert key == "to_version" and "already runs 3.9.2" in why
    [(key, why)] = version_problems("kraft", "3.9.2", "4.3", False, {})
    assert key == "to_version" and "X.Y.Z" in why


def test_zookeeper_mode_ends_at_3_9_and_pins_the_inter_broker_protocol() -> None:
    [(key, why)] = version_problems("zookeeper", "3.9.2", "4.3.1", False, {})
    assert key == "to_version" and "migrate-to-kraft" in why
    [(key, why)] = version_problems("zookeeper", "3.8.1", "3.9.2", True, {})
    assert key == "finalize"
    [(key, why)] = version_problems("zookeeper", "3.8.1", "3.9.2", False, {})
    assert "inter.broker.protocol.version pinned to 3.8" in why
    ibp = "inter.broker.protocol.version"
    assert version_problems("zookeeper", "3.8.1", "3.9.2", False, {ibp: "3.8"}) == []
    assert version_problems("zookeeper", "3.8.1", "3.9.2", False, {ibp: "3.9"}) != []
    # A downgrade needs the older line's protocol too; within one line nothing is pinned.
    assert version_problems("zookeeper", "3.9.2", "3.8.1", False, {ibp: "3.8"}) == []
    assert version_problems("zookeeper", "3.9.2", "3.9.1", False, {}) == []


def test_release_is_what_kafka_features_takes() -> None:
    assert release("4.3.1") == "4.3" and release("3.9.2") == "3.9"


def nodes(*specs: tuple[int, bool, bool]) -> list[NodeInfo]:
    names = {True: "broker", False: "controller"}
    return [NodeInfo(f"{names[b]}-{i}", i, b, c) for i, b, c in specs]


def test_kraft_rolls_controllers_first_the_active_one_last_then_brokers() -> None:
    dedicated = nodes((101, False, True), (102, False, True), (103, False, True))
    dedicated += nodes((2, True, False), (1, True, False))
    assert step_order("kraft", dedicated, active_controller=101) == [
        "controller-102",
        "controller-103",
        "controller-101",
        "broker-1",
        "broker-2",
    ]
    combined = nodes((1, True, True), (2, True, True), (3, True, True))
    assert step_order("kraft", combined, 2) == ["broker-1", "broker-3", "broker-2"]
    assert step_order("kraft", combined, None) == ["broker-1", "broker-2", "broker-3"]


def test_zookeeper_mode_rolls_the_brokers_the_controller_last() -> None:
    brokers = nodes((1, True, False), (2, True, False), (3, True, False))
    assert step_order("zookeeper", brokers, 1) == ["broker-2", "broker-3", "broker-1"]


def test_the_spec_names_what_an_upgrade_lacks_or_kafka_forbids(tmp_path: Path) -> None:
    cases = {
        ("{at_s: 5, kind: upgrade}", "kraft", "3.9.2"): "faults[0].to_version: upgrade needs",
        ("{at_s: 5, kind: upgrade, to_version: 3.9.2}", "kraft", "4.3.1"): (
            "faults[0].to_version: a KRaft cluster formatted by 4.3.1"
        ),
        ("{at_s: 5, kind: upgrade, to_version: 4.3.1}", "zookeeper", "3.9.2"): (
            "faults[0].to_version: Kafka 4.3.1 has no ZooKeeper mode"
        ),
        ("{at_s: 5, kind: upgrade, to_version: 4.3.1, duration_s: 9}", "kraft", "3.9.2"): (
            "faults[0].duration_s: upgrade takes no duration"
        ),
        ("{at_s: 5, kind: upgrade, to_version: 4.3.1, target: broker:1}", "kraft", "3.9.2"): (
            "faults[0].target"
        ),
    }
    for (fault, mode, version), expected in cases.items():
        got = "\n".join(spec_errors(tmp_path, fault, mode, version))
        assert expected in got, (fault, got)


def test_a_planned_upgrade_gives_the_nodes_persistent_log_directories(tmp_path: Path) -> None:
    fault = "{at_s: 5, kind: upgrade, to_version: 4.3.1, finalize: true}"
    spec = load_spec(
        write(tmp_path, SPEC.format(fault=fault, mode="kraft", version="3.9.2", config=""))
    )
    assert spec.capabilities()["persistent_data"] is True
    none = "{at_s: 5, kind: restart, target: broker:1}"
    spec = load_spec(
        write(tmp_path, SPEC.format(fault=none, mode="kraft", version="3.9.2", config=""))
    )
    assert spec.capabilities()["persistent_data"] is False
