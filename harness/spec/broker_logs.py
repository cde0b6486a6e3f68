"""`broker_logs:` of a spec: which ERROR/FATAL events of the brokers' logs an experiment
expects, so that `broker_errors` counts only the others (harness.results.broker_log)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, field_validator

from harness.common.spec_base import StrictModel
from harness.results.broker_log import compile_allow

MAX_ALLOW = 100  # patterns in one list: each is searched in every error event's message

Pattern = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class BrokerLogsSpec(StrictModel):
    """`allow`: regexes (Python `re`, searched) over an event's template, its raw message or
    its exception line; an event one of them finds is listed as allowed and not counted in
    `broker_errors`."""

    allow: list[Pattern] = Field(default=[], max_length=MAX_ALLOW)

    @field_validator("allow")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        compile_allow(patterns)  # ValueError naming the first pattern that is no regex
        return patterns
