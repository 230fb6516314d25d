# Railyard: `make demo` and `make test` are the whole set-up on a fresh Debian machine.
VENV := .venv
PY := $(VENV)/bin/python
export SPARK_LOCAL_IP := 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: install demo test unit bench lint clean e2e-compose e2e-kafka

install:
	@bash scripts/install.sh

demo: install
	$(VENV)/bin/railyard demo

test: install
	@bash scripts/run_tests.sh

unit: install
	$(PY) -m pytest -q -p no:cacheprovider tests/unit

bench:
	@RAILYARD_BENCH=1 bash scripts/install.sh
	$(PY) -m benchmarks

# the tests on Apache Kafka alone (3 KRaft brokers on loopback); `make test` runs them too
e2e-kafka: install
	$(PY) -m pytest -q -p no:cacheprovider -m kafka

# needs Docker and network access; not run by `make test` (docs/deploy.md)
e2e-compose:
	bash scripts/e2e_compose.sh

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache var artifacts
