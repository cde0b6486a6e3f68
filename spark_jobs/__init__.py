"""What Spark computes to judge a cell: the checks, pure functions of its result folder.

They read the folder through `harness.results` only (an import-linter contract); the Spark
consumer that runs *during* a cell is part of the workload (harness.workload.spark.member).
"""
