"""A consumer group's kind: `member` is one member process, `supervisor` runs the set."""
