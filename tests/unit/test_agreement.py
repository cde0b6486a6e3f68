"""`agreed`: the value runs share, never one that only some of them had."""

from __future__ import annotations

from harness.common.agreement import agreed


def test_the_value_every_run_gives() -> None:
    assert agreed(["abc", "abc", "abc"]) == "abc"
    assert agreed(iter([7])) == 7


def test_runs_that_differ_or_say_nothing_agree_on_nothing() -> None:
    assert agreed(["abc", "abd"]) is None
    assert agreed(["abc", None]) is None  # one shard without a commit: the night's is unknown
    assert agreed([]) is None
