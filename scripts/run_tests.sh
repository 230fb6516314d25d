#!/usr/bin/env bash
# `make test`: the whole suite in two processes started together.
#
# The tests that wait on servers with short deadlines (Kafka, Prometheus scrapes, the
# browser, PostgreSQL) run one after another as before, at normal priority: one Kafka
# cluster for the session, and their scrapes and timeouts see the CPU they always saw.
# While they wait, about half of this 2-core machine is idle. The rest (tests/unit, and
# the Spark jobs, whose servers get minutes to start) runs in that idle time, at the
# lowest CPU and I/O priority. It is not free: beside it some browser tests ran up to a
# third slower, and SCHED_IDLE instead of nice 19 changed nothing measurable. But the
# server tests still end 60-95 s sooner than the whole suite did in one process, and
# the rest ends long before them. (pytest-xdist spread
# both kinds over equal workers: the scrapes went stale under the load, 2 runs in 4
# failed.)
#
# Both logs are printed, the idle-time tests' after the others; either failing fails
# `make test` (and pytest fails when it collects no test).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
IDLE=(tests/unit tests/integration/test_spark_*.py tests/integration/test_capacity_fleet.py)
mkdir -p var
idle_log=var/idle-tests.log

nice -n 19 ionice -c 3 "$PY" -m pytest -q -p no:cacheprovider "${IDLE[@]}" > "$idle_log" 2>&1 &
idle=$!
trap 'kill "$idle" 2>/dev/null' INT TERM

"$PY" -m pytest -q -p no:cacheprovider "${IDLE[@]/#/--ignore=}"
rest=$?
wait "$idle"
idles=$?

echo
echo "== ${IDLE[*]} (ran beside the tests above, at the lowest priority) =="
cat "$idle_log"
if [ "$rest" -ne 0 ] || [ "$idles" -ne 0 ]; then
  echo "make test: failed (the tests above: exit $rest; ${IDLE[*]}: exit $idles)"
  exit 1
fi
