"""A user's own program as the pipeline (`pipeline.kind: command`): `member` launches and
bounds one process of it, `supervisor` runs the set "pipeline" and tells when its output has
caught up with the input (`catch_up`)."""
