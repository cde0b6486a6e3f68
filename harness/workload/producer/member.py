"""The producer as its own process, so the nemesis can SIGKILL it or pause it.

`python -m harness.workload.producer.member --spec JSON --runtime JSON --name p<k>
[--first-seq N] [--first-txn M] --end-ms EPOCH_MS`

- `--spec`: the spec's `producer` part as its pydantic JSON (harness.spec.producer.ProducerSpec:
  acks, rate, records, record_size, config, transactions, …);
- `--runtime`: harness.workload.runtime.Runtime as JSON (bootstrap, topic, `directory`: the
  folder of the incarnation's files, `max_s`: it stops by itself after this long);
- `--name`: the incarnation, `p0`, then one more per restart;
- `--first-seq`, `--first-txn`: where this incarnation goes on (0 for the first);
- `--end-ms`: when sending stops (epoch ms): the schedule's end, the same for every incarnation.

It sends seq N, N+1, … at the spec's rate until `--end-ms` (or the spec's records are done)
through the one core (harness.workload.producer.core, which says what it writes: the
`<name>.sends.csv`, `.acks.csv` and with transactions `.txns.csv` of
harness.results.producer_files), its events to `<name>.events.jsonl`, librdkafka's log to
stderr (the supervisor's `<name>.stderr.log`). SIGTERM ends the open transaction and stops;
the parent's death stops it too. It loads no fault kind and no cluster class
(import-linter contract "light-processes").
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from harness.results.producer_files import IncarnationPaths, ProducerEvents
from harness.spec.producer import ProducerSpec
from harness.workload.producer.core import ProducerCore
from harness.workload.runtime import Runtime


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", required=True, help="the spec's producer part (its JSON)")
    parser.add_argument("--runtime", required=True, help="the Runtime (its JSON)")
    parser.add_argument("--name", required=True, help="p<k>: the incarnation")
    parser.add_argument("--first-seq", type=int, default=0)
    parser.add_argument("--first-txn", type=int, default=0)
    parser.add_argument("--end-ms", type=int, required=True, help="stop sending at (epoch ms)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    spec = ProducerSpec.model_validate_json(args.spec)
    runtime = Runtime.from_json(args.runtime)
    runtime.directory.mkdir(parents=True, exist_ok=True)
    t = spec.transactions
    core = ProducerCore(
        spec,
        runtime,
        ProducerEvents(IncarnationPaths(runtime.directory, args.name)),
        name=args.name,
        first_seq=args.first_seq,
        first_txn=args.first_txn,
        end_ms=args.end_ms,
        start_fields={
            "transactional_id": t.transactional_id if t else None,
            "pid": os.getpid(),
            "first_seq": args.first_seq,
        },
    )
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    parent = os.getppid()
    core.run(lambda: stopping or os.getppid() != parent)


if __name__ == "__main__":
    main()
