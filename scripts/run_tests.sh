#!/usr/bin/env bash
# `make test`: the whole suite in three pytest processes started together.
#
# - The tests on the session's Apache Kafka cluster (the `kafka` mark: tests/conftest.py)
#   spend most of their time waiting on throttled copies, leases and Kafka's windows.
#   They run in their own process, still one Kafka cluster for the session.
# - The other tests that wait on servers with short deadlines (Prometheus scrapes, the
#   browser, PostgreSQL) run one after another beside them, at normal priority.
# - The rest (tests/unit, and the Spark jobs, whose servers get minutes to start) runs in
#   what CPU is left, at the lowest CPU and I/O priority.
# pytest-xdist on two equal workers failed 2 runs in 4 (stale scrapes under load);
# SCHED_IDLE was no better than nice 19 for the third.
# - The Kafka tests end first (10 of the first's 18 minutes at 259 tests), so
#   it then runs a few browser files that scrape nothing (LATE), one after another, while
#   the second goes on with the rest: `make test` ends with its longest process.
#
# The logs of the second and third are printed after the first's; any failing fails
# `make test` (and pytest fails when it collects no test).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
IDLE=(tests/unit tests/integration/test_spark_*.py tests/integration/test_capacity_fleet.py)
LATE=(tests/e2e/test_pause_browser.py tests/e2e/test_execution_browser.py
      tests/e2e/test_plan_facts_browser.py tests/e2e/test_dashboard_celery.py
      tests/e2e/test_plan_audit_follow_browser.py tests/e2e/test_guards_browser.py
      tests/e2e/test_approvals_browser.py)
mkdir -p var
kafka_log=var/kafka-tests.log
idle_log=var/idle-tests.log

nice -n 19 ionice -c 3 "$PY" -m pytest -q -p no:cacheprovider "${IDLE[@]}" > "$idle_log" 2>&1 &
idle=$!
(
  "$PY" -m pytest -q -p no:cacheprovider -m kafka "${IDLE[@]/#/--ignore=}"
  on_kafka=$?
  echo
  echo "== ${LATE[*]} (after the tests on Apache Kafka, in the same process) =="
  "$PY" -m pytest -q -p no:cacheprovider -m "not kafka" "${LATE[@]}"
  late=$?
  [ "$on_kafka" -eq 0 ] && [ "$late" -eq 0 ]
) > "$kafka_log" 2>&1 &
kafka=$!
trap 'kill "$idle" "$kafka" 2>/dev/null' INT TERM

"$PY" -m pytest -q -p no:cacheprovider -m "not kafka" "${IDLE[@]/#/--ignore=}" \
  "${LATE[@]/#/--ignore=}"
rest=$?
wait "$kafka"
kafkas=$?
wait "$idle"
idles=$?

echo
echo "== the tests on Apache Kafka (-m kafka), then ${LATE[*]} (ran beside the tests above) =="
cat "$kafka_log"
echo
echo "== ${IDLE[*]} (ran beside the tests above, at the lowest priority) =="
cat "$idle_log"
if [ "$rest" -ne 0 ] || [ "$kafkas" -ne 0 ] || [ "$idles" -ne 0 ]; then
  echo "make test: failed (the tests above: exit $rest; on Apache Kafka and ${LATE[*]}: exit $kafkas;" \
       "${IDLE[*]}: exit $idles)"
  exit 1
fi
