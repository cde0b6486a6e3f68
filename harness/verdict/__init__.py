"""Verdicts: a cell's measured outcome against its spec's expectations (pass / fail / unknown)."""

from harness.verdict.checks import Check, evaluate, overall

__all__ = ["Check", "evaluate", "overall"]
