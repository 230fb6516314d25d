"""The book of configs an execution changed, so it can put the cluster back exactly.

Before the executor sets a config it records the value the key had (None: not set) and
commits; only then does it alter the cluster. Restoring puts the prior value back, or
deletes the key when it had none, and only then marks the record restored. A crash at
any point leaves a record that restoring again fixes: both halves are idempotent.
"""

from __future__ import annotations

from collections.abc import Callable

from backend.errors import BadInput, Unavailable
from backend.gateways.base import ClusterGateway, GatewayError
from backend.store.executions import ExecutionRecords

Entity = tuple[str, str]  # (entity_type, name)
Configs = dict[Entity, dict[str, str]]  # desired values per entity


class ConfigBook:
    """One execution's records of changed configs."""

    def __init__(self, records: ExecutionRecords, plan_id: int, gateway: ClusterGateway,
                 audit: Callable[[str, dict], None]) -> None:
        self.store, self.plan_id, self.gw, self.audit = records, plan_id, gateway, audit

    def records(self, active_only: bool = True) -> list[dict]:
        return self.store.booked(self.plan_id, active_only)

    def sync(self, desired: Configs, now: float) -> None:
        """Make the executor's configs exactly ``desired``: set what differs (recording
        prior values first) and restore every recorded key that is no longer wanted."""
        held = {(r["entity_type"], r["name"], r["key"]): r for r in self.records()}
        changes = {}
        for (etype, name), values in sorted(desired.items()):
            changed = {k: v for k, v in values.items()
                       if (etype, name, k) not in held or held[(etype, name, k)]["value"] != v}
            if changed:
                changes[(etype, name)] = changed
        self._record(changes, held, now)
        for (etype, name), changed in changes.items():
            self.gw.alter_configs(etype, name, set_=changed)
            self.audit("config_set", {"entity_type": etype, "name": name, "set": changed})
        wanted = {(e, n, k) for (e, n), values in desired.items() for k in values}
        self._restore([r for key, r in held.items() if key not in wanted])

    def restore_all(self) -> None:
        """Put every config this execution changed back as it was."""
        self._restore(self.records())

    def _record(self, changes: Configs, held: dict, now: float) -> None:
        """Store, in one transaction, the prior values of keys not already held (read
        from the cluster) and the values about to be set."""
        current = {entity: self.gw.describe_configs(*entity)["configs"]
                   for entity, changed in changes.items()
                   if any((*entity, k) not in held for k in changed)}
        kept, fresh = [], []
        for (etype, name), changed in changes.items():
            for key, value in changed.items():
                row = {"entity_type": etype, "name": name, "key": key, "value": value}
                if (etype, name, key) in held:
                    kept.append(row)
                else:
                    fresh.append({**row, "prior": current[(etype, name)].get(key)})
        self.store.book(self.plan_id, kept, fresh, now)

    def _restore(self, rows: list[dict]) -> None:
        """Put ``rows`` back on the cluster entity by entity, then mark the ones put back
        restored in one transaction; an entity that fails does not stop the others, and
        its error is raised once the rest are recorded (its rows stay booked)."""
        by_entity: dict[Entity, list[dict]] = {}
        for r in rows:
            by_entity.setdefault((r["entity_type"], r["name"]), []).append(r)
        done, error = [], None
        for (etype, name), recs in sorted(by_entity.items()):
            put = {r["key"]: r["prior"] for r in recs if r["prior"] is not None}
            drop = [r["key"] for r in recs if r["prior"] is None]
            try:
                self.gw.alter_configs(etype, name, set_=put or None, delete=drop or None)
            except (GatewayError, Unavailable, BadInput) as e:
                error = error or self._why(etype, name, e)
                continue
            done += recs
            self.audit("config_restored", {"entity_type": etype, "name": name,
                                           "set": put, "deleted": drop})
        self.store.restored(self.plan_id, done)
        if error is not None:
            raise error

    def _why(self, etype: str, name: str, e: Exception) -> Exception:
        """A broker that is down cannot take its configs back: Kafka alters a broker's
        configs through that very broker (KAFKA-13392), and the client's error names a
        connection or an unknown node id, not the broker. Say which broker the executor
        waits for (a retriable error, so the restore budget applies); ``e`` otherwise."""
        if etype != "broker" or not name.isdigit():
            return e
        try:
            brokers = self.gw.describe_cluster()["brokers"]
        except (GatewayError, Unavailable):
            return e
        if any(str(b["id"]) == name and b["alive"] for b in brokers):
            return e
        return GatewayError("BROKER_NOT_AVAILABLE", f"broker {name} is down: its throttle "
                            f"configs are put back once it is up again ({e})")


def in_words(rows: list[dict], most: int = 10) -> str:
    """Booked configs as a sentence: "broker 3 leader.replication.throttled.rate is
    1000000 (was not set); ...", the first ``most`` of them."""
    def one(r: dict) -> str:
        value = r["value"] if len(r["value"]) <= 40 else r["value"][:37] + "..."
        was = "not set" if r["prior"] is None else repr(r["prior"])
        return f"{r['entity_type']} {r['name']} {r['key']} is {value!r} (was {was})"
    text = "; ".join(one(r) for r in rows[:most])
    return text + (f"; and {len(rows) - most} more" if len(rows) > most else "")

