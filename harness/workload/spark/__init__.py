"""A Spark Structured Streaming query's kind: `member` is the query's process, `supervisor`
runs it as a consumer set."""
