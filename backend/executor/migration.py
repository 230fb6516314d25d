"""Running an approved shrink on a cluster that cannot delete partitions (Apache Kafka):
the migration the plan carries, as a checklist.

Step 0 is the executor's: create the new topic with the limit engine's placement (frozen
in the plan) through the gateway's CreateTopics, under the KIP-599 controller mutation
quota: the forecast (engines.quota: the cost in partitions against the bucket of
Railyard's client id) and the cluster's answer (``throttle_time_ms``) are audited, and a
THROTTLING_QUOTA_EXCEEDED is retried once the throttle time has passed. The other steps
(switch producers, drain consumers, delete the old topic) are an operator's, checked one
by one on the plan's page (services.execution.check_step); the last check completes it.

Each step is a batch row (pending -> done); a restart finds the topic already there (its
own, with the planned partitions) and goes on. A cancel ends the plan; the new topic, if
created, stays (producers may already write to it).
"""

from __future__ import annotations

import time

from backend.engines import quota
from backend.errors import Unavailable
from backend.executor.shrink import FrozenShrinks
from backend.gateways.base import METADATA_LAG_SECONDS, GatewayError
from backend.store.executions import MIGRATION, Execution

THROTTLED = "THROTTLING_QUOTA_EXCEEDED"
METADATA_POLL_SECONDS = 0.2  # how often a created topic is looked for until served


def migration_content(shrink: dict) -> dict:
    """What a migration execution stores and runs: the approved shrink, unchanged."""
    return {"shrink": shrink, "execution": {"mode": MIGRATION, "throttle": None}}


def quota_forecast(quotas: list[dict], partitions: int, user: str | None,
                   client_id: str) -> dict:
    """What creating ``partitions`` costs under the KIP-599 quota that applies to
    (``user``, ``client_id``), starting from a full bucket (an idle principal): strict mode
    admits it while tokens >= 0, then throttles further mutations for ``throttle_ms``.
    A user only the brokers know (None) matters only when some quota names a user."""
    charged = {"user": user, "client_id": client_id}
    rates = {(q["user"], q["client_id"]): q["controller_mutation_rate"]
             for q in quotas if q.get("controller_mutation_rate")}
    if user is None and any(u is not None for u, _ in rates):
        return unknown_forecast(partitions, user, client_id,
                                "a user quota may apply, and the user of a TLS client "
                                "certificate is the brokers' to name (ssl.principal.mapping.rules)")
    res = quota.QuotaBook(rates).resolve(user or "", client_id)
    if res.rate is None:
        return {"quota": None, "cost": partitions, "charged_to": charged, "throttle_ms": 0}
    full = quota.burst(res.rate)
    left = full - partitions
    return {"quota": res.entity, "rate": res.rate, "burst": full, "cost": partitions,
            "charged_to": charged, "tokens_after": left,
            "throttle_ms": int(quota.throttle_ms(left, res.rate))}


def unknown_forecast(partitions: int, user: str | None, client_id: str, why: str) -> dict:
    """A forecast that cannot name the quota: the cluster's answer alone decides."""
    return {"quota": None, "cost": partitions, "unknown": why,
            "charged_to": {"user": user, "client_id": client_id}}


class Throttled(GatewayError):
    """THROTTLING_QUOTA_EXCEEDED with the time the cluster said to wait."""

    def __init__(self, message: str, throttle_ms: int) -> None:
        super().__init__(THROTTLED, message)
        self.throttle_ms = throttle_ms


class MigrationExecutor(FrozenShrinks):
    """Runs shrink migrations: creates the topic, then waits for the operator's checks."""

    def _failed_attempt(self, ex: Execution, e: Exception, now: float) -> Execution:
        """A quota throttle is not a failure: wait as long as the cluster said, then retry
        (not counted against the retry budget)."""
        if not isinstance(e, Throttled):
            return super()._failed_attempt(ex, e, now)
        wait = e.throttle_ms / 1000
        self.journal.record(ex.plan_id, "execution_retry",
                            {"error": str(e), "retry_in": wait}, now)
        return self.records.save(ex, retry_at=now + wait, error=str(e), updated_at=now)

    def _step(self, ex: Execution, now: float) -> Execution:
        plan_id = ex.plan_id
        if ex.state == "failing":
            return self._end(ex, "failed", ex.cause, now)
        if ex.state == "cancelling":
            return self._end(ex, "cancelled", None, now)
        steps = self.records.batches(plan_id)
        if steps[0]["state"] != "done":
            return self._create(ex, now)
        done = sum(s["state"] == "done" for s in steps)
        if done != ex.partitions_done:
            ex = self.records.save(ex, partitions_done=done, updated_at=now)
        if done == len(steps):
            return self._end(ex, "completed", None, now)
        return ex

    def _create(self, ex: Execution, now: float) -> Execution:
        plan_id = ex.plan_id
        m = self._shrink(plan_id)["migration"]
        name, lists = m["new_topic"], [m["assignment"][k] for k in
                                       sorted(m["assignment"], key=int)]
        user, client_id = self.gw.principal()
        try:
            forecast = quota_forecast(self.gw.describe_client_quotas(), len(lists), user,
                                      client_id)
        except Unavailable as e:  # the forecast is advice: the cluster's answer decides
            forecast = unknown_forecast(len(lists), user, client_id, str(e))
        out = self.gw.create_topics([{"name": name, "assignment": lists}], user=user or "",
                                    client_id=client_id)[0]
        if out["error"] == THROTTLED:
            raise Throttled(f"throttled for {out['throttle_time_ms']} ms by the controller "
                            f"mutation quota ({forecast['quota']})", out["throttle_time_ms"])
        if out["error"] == "TOPIC_ALREADY_EXISTS":
            found = len(self._placement(name))
            if found != len(lists):
                raise GatewayError("TOPIC_ALREADY_EXISTS", f"topic '{name}' exists with {found}"
                                   f" partitions, not the planned {len(lists)}: not this "
                                   "plan's; re-propose with another name")
            self.journal.record(plan_id, "migration_topic_found", {"topic": name}, now)
        elif out["error"]:
            raise GatewayError(out["error"], out["message"] or "")
        else:
            got = self._placement(name)
            self.journal.record(plan_id, "migration_topic_created", {
                "topic": name, "partitions": len(got), "replication_factor": len(lists[0]),
                "throttle_time_ms": out["throttle_time_ms"], "quota": forecast,
                "placement_as_planned": got == lists}, now)
            if got != lists:
                raise GatewayError("INVALID_REPLICA_ASSIGNMENT", f"topic '{name}' was created "
                                   f"with {len(got)} partitions placed {got[:4]}, not the "
                                   f"planned {len(lists)} placed {lists[:4]}: the cluster did "
                                   "not follow the replica assignment; fix or delete it by "
                                   "hand")
        self.records.save_batch(plan_id, 0, state="done", started_at=now, ended_at=now,
                                done=1)
        return self.records.save(ex, partitions_done=1, updated_at=now)

    def _placement(self, name: str) -> list[list[int]]:
        """The replica lists of topic ``name`` as the cluster describes them, partition 0
        first. CreateTopics answers once the controller has committed the topic, and a
        broker serves it in Metadata only once it has applied that record (on a busy
        cluster, later: gateways.base.METADATA_LAG_SECONDS). So a topic not seen yet is
        waited for that long, then retried as the cluster not answering."""
        deadline = time.monotonic() + METADATA_LAG_SECONDS
        while not (found := self.gw.describe_topics([name], missing_ok=True)):
            if time.monotonic() > deadline:
                raise Unavailable("the cluster", f"topic '{name}' is not in the brokers' "
                                  f"metadata {METADATA_LAG_SECONDS:g} s after it was created")
            time.sleep(METADATA_POLL_SECONDS)
        parts = found[0]["partitions"]
        return [p["replicas"] for p in sorted(parts, key=lambda p: p["partition"])]
