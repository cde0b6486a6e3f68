"""A share group on a real Kafka 4.3.1 broker (KIP-932): a member SIGKILLed while it holds
acquired records. What it held comes back to the group once the acquisition lock expires;
every record the producer acknowledged is processed to ACCEPT, none is accepted twice, and
the drain ends on the broker's word (the group's lag 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.experiments.cli import HERE, harness, not_passed

pytestmark = pytest.mark.docker


@pytest.mark.parametrize(
    "client",
    # The Java member's cell takes the same path through the runner; its event mapping has
    # its unit test (tests/unit/test_share_groups.py): the slow lane runs it here too.
    ["librdkafka", pytest.param("java", marks=pytest.mark.slow_lane)],
)
def test_a_killed_members_records_come_back_and_none_is_accepted_twice(
    tmp_path: Path, client: str
) -> None:
    done = harness(
        "run", HERE / "share-crash.yaml", "--cells", f"*client={client}", "--out", tmp_path
    )
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (cell,) = json.loads((run_dir / "summary.json").read_text())["cells"]
    folder = run_dir / "cells" / cell["cell"]
    stderr = done.stderr
    assert cell["verdict"] == "pass", f"{not_passed(cell)}\n{stderr[-3000:]}"
    assert not [e for e in _events(folder) if e["kind"] == "consumer.unassigned"]
    events = _events(folder)
    (drain,) = [e for e in events if e["kind"] == "drain.end"]
    assert drain["complete"] is True
    (crash,) = [e for e in events if e["kind"] == "consumer.crash" and e.get("pid")]
    share = pq.read_table(folder / "share.parquet").to_pandas()
    ledger = pq.read_table(folder / "ledger.parquet").to_pandas()
    consumed = pq.read_table(folder / "consumed.parquet").to_pandas()
    # Every acknowledged record processed to ACCEPT by some member.
    assert set(ledger[ledger.status == "ok"].seq) <= set(consumed.seq)
    figures = cell["share_by_set"]["share"]
    assert figures["accepted_twice"] == 0 and figures["redelivered"] >= 1
    # What came back: records handed to the killed process, never answered, delivered again
    # (delivery count 2) after the kill, at least the lock duration after their first delivery.
    before = share[(share.consumer == "share/m0") & (share.ts < crash["ts"])]
    answered = set(map(tuple, before[before.event == "acked"][["partition", "offset"]].values))
    held = {
        (p, o, ts)
        for p, o, ts in before[before.event == "delivered"][["partition", "offset", "ts"]].values
        if (p, o) not in answered
    }
    again = share[(share.event == "delivered") & (share.delivery_count == 2)]
    came_back = {(p, o): ts for p, o, ts in again[["partition", "offset", "ts"]].values}
    returned = [(p, o, ts) for p, o, ts in held if (p, o) in came_back]
    assert returned, (len(held), figures)
    assert all(came_back[(p, o)] - ts >= 4000 for p, o, ts in returned)
    assert figures["delivery_counts"].get("2", 0) >= len(returned)


def _events(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
