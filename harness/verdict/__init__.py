"""Verdicts: a cell's measured outcome against its spec's expectations (pass / fail / unknown)."""

from harness.verdict.checks import Judgement, evaluate, overall

__all__ = ["Judgement", "evaluate", "overall"]
