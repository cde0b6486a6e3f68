"""How a record carries its sequence number, so every consumer (Spark too) can read it back."""

from __future__ import annotations

SEQ_DIGITS = 20
MIN_RECORD_SIZE = SEQ_DIGITS + 4


def encode_value(seq: int, size: int) -> bytes:
    """`seq` as 20 zero-padded digits, then '|' and padding up to `size` bytes."""
    head = b"%020d|" % seq
    return head + b"x" * max(0, size - len(head))


def encode_key(seq: int) -> bytes:
    return b"k%d" % seq


def decode_seq(value: bytes | None) -> int | None:
    """The sequence number of a record value, or None for a value we did not write."""
    if value is None or len(value) < SEQ_DIGITS or not value[:SEQ_DIGITS].isdigit():
        return None
    return int(value[:SEQ_DIGITS])
