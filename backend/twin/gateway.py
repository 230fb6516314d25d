"""The ClusterGateway over the simulated cluster (backend.twin.cluster.TwinCluster): the
twin answers as Kafka's Admin API would, so tools drive it like a real cluster, and as a
cluster implementing the delete-partitions KIP would (PartitionDeleter: DeletePartitions,
and each partition's ``mode`` in describe_topics)."""

from __future__ import annotations

import numpy as np

from backend.errors import BadInput, Unavailable
from backend.gateways.base import UNAUTHENTICATED, GatewayError
from backend.model.bounds import parse_broker_id
from backend.model.csr import gather_index, offsets_from_lengths
from backend.model.snapshot import Snapshot
from backend.twin.cluster import DEFAULT_BROKER, TwinCluster
from backend.twin.state import MODE_NAMES


class TwinGateway:
    """ClusterGateway for the twin; strict (new-client) quota mode, as Kafka's Admin API."""

    def __init__(self, twin: TwinCluster) -> None:
        self.twin = twin

    def describe_cluster(self) -> dict:
        with self.twin.lock:
            snap, st = self.twin.snap, self.twin.state
            ctrl = self.twin.controller()
            return {"cluster": snap.cluster,
                    "controller": int(snap.broker_ids[ctrl]) if ctrl >= 0 else None,
                    "brokers": [{"id": int(b), "rack": snap.broker_racks[i],
                                 "alive": bool(st.alive[i])}
                                for i, b in enumerate(snap.broker_ids.tolist())]}

    def describe_topics(self, names: list[str] | None = None,
                        missing_ok: bool = False) -> list[dict]:
        with self.twin.lock:
            snap, st = self.twin.snap, self.twin.state
            if names is None:
                wanted = list(range(snap.n_topics))
            else:  # BadInput naming a topic the twin does not have, unless missing_ok
                wanted = [snap.topic_index(n) for n in names
                          if not missing_ok or snap.has_topic(n)]
            starts = snap.topic_starts
            counts = np.diff(starts)[wanted] if wanted else np.zeros(0, np.int64)
            rows = gather_index(starts, np.asarray(wanted, np.int64))
            reps = gather_index(snap.replica_offsets, rows)  # only these topics' replicas
            ids = snap.broker_ids[snap.replica_broker[reps]].tolist()
            isr = st.isr[reps].tolist()
            off = offsets_from_lengths(np.diff(snap.replica_offsets)[rows]).tolist()
            leader = np.where(st.leader[rows] >= 0,
                              snap.broker_ids[np.maximum(st.leader[rows], 0)], -1).tolist()
            modes = [MODE_NAMES[m] for m in st.mode[rows].tolist()]
            out, i = [], 0
            for t, n in zip(wanted, counts.tolist(), strict=True):
                out.append({"name": str(snap.topic_names[t]),
                            "internal": bool(snap.topic_internal[t]),
                            "partitions": [{
                                "partition": r - i,
                                "leader": leader[r],
                                "mode": modes[r],
                                "replicas": ids[off[r]:off[r + 1]],
                                "isr": [b for b, ok in zip(ids[off[r]:off[r + 1]],
                                                           isr[off[r]:off[r + 1]],
                                                           strict=True) if ok]}
                                for r in range(i, i + n)]})
                i += n
            return out

    def assignment(self) -> Snapshot:
        return self.twin.assignment()

    def topics_assignment(self, names: list[str]) -> Snapshot:
        return self.twin.assignment().only_topics(names)

    def replica_sizes(self, wanted: dict[int, list[tuple[str, int]]]
                      ) -> dict[tuple[str, int, int], int]:
        """As DescribeLogDirs answers: a replica's log is the leader's less what it still
        lags (an adding replica starts empty and grows as it copies); only the replicas
        asked for are looked at, and one the twin does not have is absent."""
        out: dict[tuple[str, int, int], int] = {}
        with self.twin.lock:
            snap, st = self.twin.snap, self.twin.state
            for broker, partitions in wanted.items():
                for topic, pid in partitions:
                    if not snap.has_topic(topic) or not 0 <= pid < \
                            snap.topic_partition_count(snap.topic_index(topic)):
                        continue
                    row = snap.partition_row(topic, pid)
                    first = int(snap.replica_offsets[row])
                    on = snap.replicas_of(row)
                    if int(broker) in on:
                        lag = st.lag[first + on.index(int(broker))]
                        out[(topic, pid, int(broker))] = max(int(st.log_size[row] - lag), 0)
        return out

    def _read_fault(self, op: str) -> None:
        """A fault on a read is Unavailable, as the Kafka gateway answers a refused read."""
        try:
            self.twin.faults.check(op, self.twin.now_seconds)
        except GatewayError as e:
            raise Unavailable(f"Twin cluster '{self.twin.snap.cluster}'",
                              f"{op} refused: {e}") from None

    def describe_configs(self, entity_type: str, name: str) -> dict:
        self._read_fault("describe_configs")
        with self.twin.lock:
            if entity_type == "broker":
                if name != DEFAULT_BROKER:
                    self.twin.snap.broker_positions([parse_broker_id(name, DEFAULT_BROKER)])
                store = self.twin.broker_configs
            elif entity_type == "topic":
                self.twin.snap.topic_index(name)
                store = self.twin.topic_configs
            else:
                raise BadInput(f"entity type must be 'broker' or 'topic', got '{entity_type}'")
            return {"entity_type": entity_type, "name": name, "configs": dict(store.get(name, {}))}

    def find_configs(self, entity_type: str, keys: list[str]) -> dict[str, dict[str, str]]:
        self._read_fault("describe_configs")
        with self.twin.lock:
            if entity_type not in ("broker", "topic"):
                raise BadInput(f"entity type must be 'broker' or 'topic', got '{entity_type}'")
            store = self.twin.broker_configs if entity_type == "broker" \
                else self.twin.topic_configs
            found = {name: {k: cfg[k] for k in keys if k in cfg} for name, cfg in store.items()}
        return {name: got for name, got in sorted(found.items()) if got}

    def describe_client_quotas(self) -> list[dict]:
        with self.twin.lock:
            return [{"user": u, "client_id": c, "controller_mutation_rate": r}
                    for (u, c), r in sorted(self.twin.quotas.rates.items(),
                                            key=lambda kv: (str(kv[0][0]), str(kv[0][1])))]

    def alter_configs(self, entity_type: str, name: str, set_: dict | None = None,
                      delete: list[str] | None = None) -> dict:
        self.twin.faults.check("alter_configs", self.twin.now_seconds)
        return self.twin.alter_configs(entity_type, name, set_, delete)

    def alter_reassignments(self, plan: dict) -> dict:
        self.twin.faults.check("alter_reassignments", self.twin.now_seconds)
        return self.twin.alter_reassignments(plan)

    def list_reassignments(self) -> list[dict]:
        self._read_fault("list_reassignments")
        return self.twin.list_reassignments()

    def cancel_reassignments(self, partitions: list[tuple[str, int]] | None = None) -> dict:
        self.twin.faults.check("cancel_reassignments", self.twin.now_seconds)
        return self.twin.cancel_reassignments(partitions)

    def principal(self) -> tuple[str | None, str]:
        """As a Kafka broker without authentication names Railyard's connection."""
        return UNAUTHENTICATED

    def create_topics(self, topics: list[dict], user: str = "", client_id: str = "") -> list[dict]:
        self.twin.faults.check("create_topics", self.twin.now_seconds)
        return self.twin.create_topics(topics, user, client_id)

    def create_partitions(self, topic: str, total: int, user: str = "",
                          client_id: str = "") -> dict:
        return self.twin.create_partitions(topic, total, user, client_id)

    def delete_topics(self, names: list[str], user: str = "", client_id: str = "") -> list[dict]:
        return self.twin.delete_topics(names, user, client_id)

    def partition_deletion_enabled(self) -> bool:
        return self.twin.settings.delete_partition_enable

    def delete_partitions(self, topic: str, total: int, delay_ms: int, user: str = "",
                          client_id: str = "") -> dict:
        self.twin.faults.check("delete_partitions", self.twin.now_seconds)
        return self.twin.delete_partitions(topic, total, delay_ms, user, client_id)

    def alter_client_quota(self, user: str | None, client_id: str | None,
                           rate: float | None) -> dict:
        if user is None and client_id is None:
            raise BadInput("a quota names a user, a client id, or both ('<default>' for the "
                           "default entity)")
        if rate is not None and not rate > 0:
            raise BadInput(f"controller_mutation_rate must be > 0, got {rate}")
        self.twin.set_mutation_quota(user, client_id, rate)
        return {"user": user, "client_id": client_id, "controller_mutation_rate": rate}
