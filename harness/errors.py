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
