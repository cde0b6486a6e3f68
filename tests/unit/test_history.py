"""The one history: ordered events with wall-clock ms, written as JSON lines."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from harness import History


def test_events_keep_order_and_fields(tmp_path: Path) -> None:
    history = History()
    first = history.append("fault.inject", fault="kill", target="broker-1")
    history.append("fault.heal", fault="kill", target="broker-1")
    assert [e.kind for e in history.events] == ["fault.inject", "fault.heal"]
    assert first.ts > 1_600_000_000_000  # milliseconds since the epoch

    path = tmp_path / "history.jsonl"
    history.write_jsonl(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0] == {
        "ts": first.ts,
        "kind": "fault.inject",
        "fault": "kill",
        "target": "broker-1",
    }
    assert rows[1]["ts"] >= rows[0]["ts"]


def test_appends_from_many_threads_are_all_kept() -> None:
    history = History()
    threads = [
        threading.Thread(target=lambda: [history.append("x") for _ in range(500)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(history.events) == 2000
