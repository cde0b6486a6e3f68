"""A transactional producer end to end against a real cluster: committed and aborted
transactions, a SIGKILLed producer process replaced by a new incarnation, the transaction
coordinator's broker killed; the ledger's outcomes agree with what a read_committed final
read sees, and only the read_uncommitted group sees aborted records."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

# Slow lane: its path in make test is test_pipeline (a transactional producer with aborts, the
# txn coordinator killed, read_committed vs the ledger); test_producer_process unit tests.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_transactions_commit_abort_and_survive_a_producer_crash(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "txn-short.yaml", tmp_path)
    assert done.returncode == 0, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    assert cell["verdict"] == "pass"

    ledger = pd.read_parquet(cell_dir / "ledger.parquet")
    log = pd.read_parquet(cell_dir / "log.parquet")
    consumed = pd.read_parquet(cell_dir / "consumed.parquet")

    # Two incarnations: the killed one and its replacement, seqs one run with no gap.
    assert sorted(p.name for p in (cell_dir / "producer").glob("p*.sends.csv")) == [
        "p0.sends.csv",
        "p1.sends.csv",
    ]
    assert list(ledger["seq"]) == list(range(len(ledger)))
    txns = ledger.dropna(subset=["txn"]).groupby("txn")["outcome"].first()
    assert (txns == "committed").sum() >= 5 and (txns == "aborted").sum() >= 1

    # The final read_committed read sees every committed transaction's records and no
    # aborted one (a transaction whose end the producer never learnt, e.g. the one it was
    # committing when it was killed, may have gone either way).
    placed = log.merge(ledger[["seq", "outcome"]], on="seq")
    assert set(placed.loc[placed["committed"], "outcome"]) <= {"committed", "unknown"}
    assert (placed.loc[~placed["committed"], "outcome"] == "aborted").any()
    assert not placed.loc[placed["outcome"] == "committed", "committed"].eq(False).any()
    committed = set(ledger.loc[ledger["outcome"] == "committed", "seq"])
    assert committed <= set(log.loc[log["committed"], "seq"])

    # The read_committed group saw every committed record and no aborted one; the
    # read_uncommitted group saw aborted ones.
    consumed["set"] = consumed["consumer"].str.split("/").str[0]
    seen = consumed.merge(ledger[["seq", "outcome"]], on="seq")
    rc, ru = seen[seen["set"] == "group"], seen[seen["set"] == "group2"]
    assert committed <= set(rc["seq"]) and "aborted" not in set(rc["outcome"])
    assert (ru["outcome"] == "aborted").any()
    assert cell["counts"]["aborted_read"] == 0 and cell["counts"]["lost"] == 0
    assert cell["aborted_consumed_by_set"]["group2"] >= 1

    history = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in history]
    assert kinds.count("producer.launch") == 2 and kinds.count("producer.kill") == 1
    injected = [e["target"] for e in history if e["kind"] == "fault.inject"]
    assert injected[0] == "producer" and injected[1].startswith("broker-")
