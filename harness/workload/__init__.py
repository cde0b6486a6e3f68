"""The workload: a producer that keeps a ledger, consumers that record what they process."""
