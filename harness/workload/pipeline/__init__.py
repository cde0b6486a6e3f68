"""The consume-transform-produce pipeline's kind: `member` is one member process (a group
member that also writes), `supervisor` runs the set "pipeline"."""
