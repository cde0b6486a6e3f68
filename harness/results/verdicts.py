"""Verdicts and how they combine: fail beats unknown beats pass; nothing shown is unknown."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeGuard

Verdict = Literal["pass", "fail", "unknown"]
VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "unknown")


def is_verdict(value: object) -> TypeGuard[Verdict]:
    return value in VERDICTS


def as_verdict(value: object) -> Verdict:
    """A verdict read from a file: anything but pass/fail/unknown is unknown, never a pass."""
    return value if is_verdict(value) else "unknown"


def worst(verdicts: Iterable[str]) -> Verdict:
    """fail if any is fail, else unknown if any is unknown (or there are none), else pass.

    ValueError for a value that is not a verdict (use `as_verdict` on what files say).
    """
    seen = set()
    for v in verdicts:
        if not is_verdict(v):
            raise ValueError(f"verdict {v!r} is not one of {', '.join(VERDICTS)}")
        seen.add(v)
    if "fail" in seen:
        return "fail"
    if "unknown" in seen or not seen:
        return "unknown"
    return "pass"
