#!/usr/bin/env bash
# `make test`: the whole suite in two processes started together.
#
# The tests with servers (Kafka, Prometheus, Spark, PostgreSQL, Chromium) run one after
# another as before, at normal priority: one Kafka cluster for the session, and their
# short scrapes and timeouts see the CPU they always saw. They leave about half of this
# 2-core machine idle while they wait on those servers. tests/unit starts no shared
# server and runs in that idle time, at the lowest CPU and I/O priority, so it cannot
# slow the others down (pytest-xdist spread both kinds over equal workers: the scrapes of
# the server tests went stale under the load, 2 runs in 4 failed).
#
# Both logs are printed, the unit tests' after the rest; either failing fails `make test`
# (and pytest fails when it collects no test).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p var
unit_log=var/unit-tests.log

nice -n 19 ionice -c 3 "$PY" -m pytest -q -p no:cacheprovider tests/unit \
  > "$unit_log" 2>&1 &
unit=$!
trap 'kill "$unit" 2>/dev/null' INT TERM

"$PY" -m pytest -q -p no:cacheprovider --ignore=tests/unit
rest=$?
wait "$unit"
units=$?

echo
echo "== tests/unit (ran beside the tests above, at the lowest priority) =="
cat "$unit_log"
if [ "$rest" -ne 0 ] || [ "$units" -ne 0 ]; then
  echo "make test: failed (server tests: exit $rest; tests/unit: exit $units)"
  exit 1
fi
