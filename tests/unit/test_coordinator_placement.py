"""The group -> __consumer_offsets partition arithmetic, against values printed by Java."""

from __future__ import annotations

import pytest

from harness.admin import java_string_hash, offsets_partition_for


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
