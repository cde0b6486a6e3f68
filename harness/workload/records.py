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


def encode_output_value(seq: int, partition: int, offset: int, size: int) -> bytes:
    """A pipeline's output record: the input's seq first (so every reader decodes it as an
    input record), then the input partition and offset it came from."""
    head = b"%020d|%d|%d|" % (seq, partition, offset)
    return head + b"x" * max(0, size - len(head))


def decode_origin(value: bytes | None) -> tuple[int, int] | None:
    """(input partition, input offset) of a pipeline's output value, or None."""
    if value is None or decode_seq(value) is None:
        return None
    parts = value[SEQ_DIGITS + 1 :].split(b"|", 2)
    if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])
