"""Recording rules Railyard ships for its expensive live queries.

Two catalog concepts touch every partition's series: the bytes replicas still have to copy
(replica_bytes_behind, a join over every log-size series) and the per-broker fetcher lag
(replica_lag_sum_per_broker, 60k series at 200k partitions). Evaluated on every page
refresh by every browser they took seconds each and ran past the client's timeout under
20 users. Prometheus evaluates these rules once per evaluation interval instead, and the
client reads the one recorded series per broker.

Railyard's own Prometheus (`railyard prometheus up`, `railyard demo`) loads them; for your
own Prometheus, `recording_rules(dialect)` is the file to add to ``rule_files`` (see
docs/recording-rules.md). Without them the client falls back to the full expression.
"""

from __future__ import annotations

from backend.metrics import catalog

RULES_FILE = "railyard-recording.rules.yml"
BY = "broker"  # the rules are written for the label the scrape config puts on brokers
RECORDED = {  # catalog concept -> the series its rule records
    "replica_bytes_behind": "railyard:replica_bytes_behind:sum",
    "replica_lag_sum_per_broker": f"railyard:replica_lag:sum_by_{BY}",
}


def recording_rules(dialect: str = "strimzi") -> dict:
    """The rule file (Prometheus's YAML as a dict) for a naming dialect."""
    return {"groups": [{"name": "railyard-recording", "rules": [
        {"record": record, "expr": catalog.promql(concept, dialect, by=BY)}
        for concept, record in RECORDED.items()]}]}


def recorded_name(concept: str, by: str) -> str | None:
    """The recorded series standing for ``concept``, when a rule records it for ``by``."""
    return RECORDED.get(concept) if by == BY else None
