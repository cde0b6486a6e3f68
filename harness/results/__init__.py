"""The result folder: the one interface between running a cell and judging it.

Every path, table schema, history event kind, summary figure and consumer name of a cell
folder is defined here. The run side writes through this package and the checks read
through it; it imports nothing else of the harness (Jepsen's store: the folder is the
interface).

- layout.py        every path of a run and of a cell folder (CellPaths, RunPaths, query_dir)
- tables.py        Arrow schemas of ledger/consumed/log/commits.parquet and their writers
- history.py       history.jsonl: History (the writer) and the true clock (now_ms)
- history_reader.py read_jsonl: a history.jsonl read back, leniently
- events.py        the history's event kinds and their fields
- windows.py       fault windows (inject .. heal) read from a history
- isr.py           the topic's partition states read from a history, the summary's ISR figures
- consumers.py     ConsumerRef: "<set>/<member>" names and their file stems
- member_files.py  a consumer process's files (consumed/commits CSV, events, generation)
- member_tables.py those files read as Arrow tables (the runner's side: no pyarrow in members)
- producer_files.py the producer's files (sends/acks/txns CSV per incarnation, events)
- ledger_join.py   ledger.parquet from them, joined by seq range in bounded memory
- csv_tables.py    the workload's CSV files read chunk by chunk into Arrow columns
- checkpoint.py    a Spark query's checkpoint and sink commit log
- metrics.py       the figures of summary.json (counts, times, per-set and Spark figures)
- verdicts.py      pass / fail / unknown and how they combine (`worst`)
"""
