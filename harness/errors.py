"""Errors a user can act on: each message says what was wrong and what to do."""

from __future__ import annotations


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""


class ConfigError(HarnessError, ValueError):
    """Bad input (mode, broker count, version, broker setting, target)."""


class ImageMissingError(HarnessError):
    """The broker image for a Kafka version has not been built."""


class ClusterStartError(HarnessError):
    """A node did not become ready; the message carries the log tail of every node."""


class FaultError(HarnessError):
    """A fault could not be injected or healed."""


class WaitTimeout(HarnessError):
    """Something awaited did not happen in time; says what, how long, and the last state seen."""

    def __init__(self, what: str, timeout_s: float, last: object) -> None:
        self.what = what
        self.timeout_s = timeout_s
        self.last = last  # the probe's last result, or the exception its last attempt raised
        if isinstance(last, BaseException):
            seen = f"last error: {type(last).__name__}: {last}"
        else:
            seen = f"last seen: {last if isinstance(last, str) else repr(last)}"
        super().__init__(f"{what}: not within {timeout_s:g} s ({seen})")
