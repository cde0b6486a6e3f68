"""A transactional call (init/begin/commit/abort) as librdkafka's docs prescribe ("Transactional
producer API"): each error an event; retriable → the call again (bounded); abortable → the
transaction `aborted`; fatal → `unknown`, and the core re-initialises a client."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException, Producer

from harness.results import events as ev

TXN_CALL_TIMEOUT_S = 30.0  # one init/commit/abort call
TXN_CALL_ATTEMPTS = 3  # retriable errors: the call again, this many times in all


class TxnFailed(Exception):
    """A transactional call failed for good; `outcome` is what the transaction became."""

    def __init__(self, outcome: str, error: str) -> None:
        super().__init__(error)
        self.outcome = outcome
        self.error = error


def txn_action(err: KafkaError, attempt: int, abort_on_abortable: bool) -> str:
    """What a failed transactional call calls for: retry, abort or reinit (a new client)."""
    if err.fatal():
        return "reinit"
    if err.txn_requires_abort() and abort_on_abortable:
        return "abort"
    if err.retriable() and attempt < TXN_CALL_ATTEMPTS:
        return "retry"
    return "reinit"


def txn_call(
    producer: Producer,
    name: str,
    emit: Callable[..., object],
    txn: int,
    abort_on_abortable: bool = True,
) -> None:
    """`producer.<name>()` for transaction `txn`, its errors as events to `emit` (the core's
    Emit); TxnFailed when it failed for good."""
    for attempt in range(1, TXN_CALL_ATTEMPTS + 1):
        try:
            method = getattr(producer, name)
            if name == "begin_transaction":
                method()
            else:
                method(TXN_CALL_TIMEOUT_S)
            return
        except KafkaException as exc:
            err: KafkaError = exc.args[0]
            action = txn_action(err, attempt, abort_on_abortable)
            emit(
                ev.PRODUCER_TXN_ERROR,
                call=name,
                txn=txn,
                error=err.str(),
                code=err.name(),
                retriable=err.retriable(),
                abortable=err.txn_requires_abort(),
                fatal=err.fatal(),
                action=action,
            )
            if action == "retry":
                continue
            if action == "abort":
                raise TxnFailed("aborted", err.str()) from exc
            raise TxnFailed("unknown", err.str()) from exc
