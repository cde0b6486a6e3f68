"""The group -> __consumer_offsets partition arithmetic (against values printed by Java), and
librdkafka broker names read back to ports."""

from __future__ import annotations

import pytest

from harness.admin import _port_of, java_string_hash, offsets_partition_for


@pytest.mark.parametrize(
    ("group", "java_hash", "partition"),
    [
        ("group-e5fa66", -2082464711, 11),  # Math.abs, not a bit mask: 37 would be wrong
        ("kafka-chaos", -1485378023, 23),
        ("", 0, 0),
        ("é-groupe-😀", 483185382, 32),  # non-ASCII and a surrogate pair
        ("polygenelubricants", -(2**31), 0),  # Integer.MIN_VALUE maps to 0
    ],
)
def test_matches_java(group: str, java_hash: int, partition: int) -> None:
    assert java_string_hash(group) == java_hash
    assert offsets_partition_for(group, 50) == partition


@pytest.mark.parametrize(
    ("name", "port"),
    [("127.0.0.1:39001/2", 39001), ("127.0.0.1:39001/bootstrap", 39001), ("odd", None)],
)
def test_port_of_a_librdkafka_broker_name(name: str, port: int | None) -> None:
    assert _port_of(name) == port
