"""The workload: a producer that keeps a ledger, consumers that record what they process.

Each consumer kind is a folder: `<kind>/member.py` runs as its own process (group members,
pipeline members, the Spark Structured Streaming query) and writes its files through
`harness.results`; `<kind>/supervisor.py` runs its set. `consumer_kinds` lists the kinds.
"""
