"""One way to wait for something: poll a probe until it says done, bounded by a timeout.

Every deadline loop of the harness goes through `wait_until` (kafkatest's shape:
`wait_until(condition, timeout, what)`), so a timeout always reads the same way:
what was awaited, for how long, and the last thing the probe saw or raised.

The probe returns a state; `done(state)` (truthiness by default) ends the wait and
`wait_until` returns that state. A caller that wants a bool instead of an error (a
recovery that is recorded as `recovered: false`) catches `WaitTimeout`, whose `last`
keeps the last state for the record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    retry_if_result,
    wait_fixed,
)

from harness.errors import WaitTimeout

T = TypeVar("T")


def wait_until(
    probe: Callable[[], T],
    timeout_s: float,
    what: str,
    *,
    done: Callable[[T], object] = bool,
    interval_s: float = 0.5,
    retry_on: type[Exception] | tuple[type[Exception], ...] = (),
    on_retry: Callable[[T | BaseException], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Call `probe` every `interval_s` until `done(result)`; return that result.

    The probe runs at least once, and no attempt starts after `timeout_s` (the last sleep
    is skipped when it would end past it). Exceptions of the `retry_on` types count as
    "not yet"; any other propagates at once. `on_retry` sees each failed attempt's state
    (or exception) just before the pause that precedes another attempt. On timeout:
    `WaitTimeout` naming `what`, `timeout_s` and the last state seen.
    """
    start = clock()

    def out_of_time(state: RetryCallState) -> bool:
        return clock() - start + state.upcoming_sleep > timeout_s

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is not None:
            on_retry(_last(state))

    def timed_out(state: RetryCallState) -> T:
        raise WaitTimeout(what, timeout_s, _last(state))

    retrying = Retrying(
        stop=out_of_time,
        wait=wait_fixed(interval_s),
        retry=retry_if_exception_type(retry_on) | retry_if_result(lambda r: not done(r)),
        sleep=sleep,
        before_sleep=before_sleep,
        retry_error_callback=timed_out,
    )
    result: T = retrying(probe)
    return result


def _last(state: RetryCallState) -> Any:
    outcome = state.outcome
    assert outcome is not None  # tenacity calls these hooks after an attempt only
    return outcome.exception() if outcome.failed else outcome.result()
