"""`harness explore`: draw fault schedules for a spec, run each as an ordinary cell, and shrink a
schedule that violates the spec's property to the smallest one that still does.

generator (seeded schedules from the spec's `explore:`, harness.spec.explore), coverage (kind x
role x workload phase tried), budget (cells or minutes), oracle (k runs of a candidate, kept at
`need` of them), shrink (delta debugging, then durations, times, targets), repro
(minimal-repro.yaml), summary (the explore run's summary.json), trial (a schedule run through
the plan runner: the only module here that starts anything). docs/exploring.md.
"""
