"""The workload: a producer that keeps a ledger, consumers that record what they process.

Group members (`group_member`) and the Spark Structured Streaming query (`stream_consumer`)
run as their own processes and write their files through `harness.results`.
"""
