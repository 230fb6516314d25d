#!/usr/bin/env bash
# End to end on the docker-compose stack, for an operator with Docker and network access
# (`make e2e-compose`). NOT RUN on the machine Railyard was built on: it has no Docker
# engine. Steps: up (built, healthy), create topics, propose a reassignment through
# /api/v1 as one user, approve it as a second, execute it with a throttle, wait for it to
# finish, check that no throttle config is left on any broker or topic, down.
#
# The users are the ones scripts/compose_secrets.sh wrote (deploy/secrets/users): the
# operator proposes and executes, the approver approves (docs/api.md's role table).
# KEEP=1 leaves the stack up.
set -euo pipefail
cd "$(dirname "$0")/.."
API=http://127.0.0.1:8050/api/v1
THROTTLE=${THROTTLE:-5000000}
compose() { docker compose "$@"; }
kafka() { compose exec -T kafka-1 "/opt/kafka/bin/$1" --bootstrap-server kafka-1:9092 "${@:2}"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
api() {  # api USER:PASSWORD METHOD PATH [JSON]
  curl -fsS -u "$1" -X "$2" -H 'Content-Type: application/json' ${4:+-d "$4"} "$API$3"
}
cleanup() { if [ "${KEEP:-0}" != 1 ]; then compose down -v; fi; }
trap cleanup EXIT

compose build
scripts/compose_secrets.sh
user() { awk -v r="$1" '$2 == r {print $1 ":" $3; exit}' deploy/secrets/users; }
RAILYARD_E2E_PROPOSER=$(user operator)
RAILYARD_E2E_APPROVER=$(user approver)
compose up -d --wait

echo "== topics"
for t in orders:12 payments:6 audit:3; do
  kafka kafka-topics.sh --create --if-not-exists --topic "${t%%:*}" \
    --partitions "${t##*:}" --replication-factor 2
done
kafka kafka-producer-perf-test.sh --topic orders --num-records 200000 --record-size 512 \
  --throughput -1 --producer-props bootstrap.servers=kafka-1:9092 >/dev/null 2>&1 || true

echo "== propose (drain broker 3) as ${RAILYARD_E2E_PROPOSER%%:*}"
plan=$(api "$RAILYARD_E2E_PROPOSER" POST /plans \
  "{\"cluster\": \"compose\", \"kind\": \"reassignment\", \"title\": \"e2e drain\",
    \"generate\": {\"goal\": \"drain\", \"brokers\": [3]}, \"throttle\": $THROTTLE}")
id=$(echo "$plan" | json 'd["id"]')
sha=$(echo "$plan" | json 'd["sha256"]')
echo "plan $id: $(echo "$plan" | json 'd["preview"]["replica_moves"]') replica moves"

echo "== approve as ${RAILYARD_E2E_APPROVER%%:*}"
api "$RAILYARD_E2E_APPROVER" POST "/plans/$id/approve" \
  "{\"sha256\": \"$sha\", \"comment\": \"e2e\"}" >/dev/null

echo "== execute with a throttle of $THROTTLE B/s"
api "$RAILYARD_E2E_PROPOSER" POST "/plans/$id/execute" '{}' >/dev/null
for _ in $(seq 1 180); do
  state=$(api "$RAILYARD_E2E_PROPOSER" GET "/plans/$id" | json 'd["state"]')
  case "$state" in
    completed) break ;;
    failed|cancelled|expired) echo "plan $id ended $state" >&2; exit 1 ;;
  esac
  sleep 5
done
[ "$state" = completed ] || { echo "plan $id still $state" >&2; exit 1; }

echo "== no throttle left"
# without --all, kafka-configs lists only configs set on the entity: any throttle is left over
left=$( { kafka kafka-configs.sh --describe --entity-type brokers;
          kafka kafka-configs.sh --describe --entity-type brokers --entity-default;
          kafka kafka-configs.sh --describe --entity-type topics; } \
        | grep -E 'replication\.throttled\.(rate|replicas)=' || true)
if [ -n "$left" ]; then echo "throttle configs left:"; echo "$left"; exit 1; fi
kafka kafka-reassign-partitions.sh --list | grep -q "No partition reassignments" \
  || { echo "reassignments still in flight" >&2; exit 1; }
echo "e2e-compose: OK (plan $id)"
