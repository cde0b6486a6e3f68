"""The result folder: the one interface between running a cell and judging it.

Every path, table schema, history event kind, summary figure and consumer name of a cell
folder is defined here. The run side writes through this package and the checks read
through it; it imports nothing else of the harness (Jepsen's store: the folder is the
interface).

- layout.py        every path of a run and of a cell folder (CellPaths, RunPaths, query_dir)
- tables.py        Arrow schemas of ledger/consumed/log/commits.parquet and their writer
- history.py       history.jsonl: History (the writer), read_jsonl (a lenient reader)
- events.py        the history's event kinds and their fields
- windows.py       fault windows (inject .. heal) read from a history
- consumers.py     ConsumerRef: "<set>/<member>" names and their file stems
- member_files.py  a consumer process's files (consumed/commits CSV, events, generation)
- checkpoint.py    a Spark query's checkpoint and sink commit log
- metrics.py       the figures of summary.json (counts, times, per-set and Spark figures)
- verdicts.py      pass / fail / unknown and how they combine (`worst`)
"""
