"""Recording rules Railyard ships for its expensive live queries.

Two catalog concepts touch every partition's series: the bytes replicas still have to copy
(replica_bytes_behind, a join over every log-size series) and the per-broker fetcher lag
(replica_lag_sum_per_broker, 60k series at 200k partitions). Evaluated on every page
refresh by every browser they took seconds each and ran past the client's timeout under
20 users. Prometheus evaluates these rules once per evaluation interval instead, and the
client reads the one recorded series per broker.

The group is evaluated every RULES_INTERVAL_SECONDS, not at the scrape interval: on a
200k-partition cluster one evaluation reads ~1M series and takes longer than a 5 s scrape
interval, so at that pace Prometheus evaluated back to back, timed out (no series were
ever recorded) and kept a core busy, making every other query of the dashboard seconds
slower. The recorded answers are for ETAs and lag, which a minute's age does not change.

Railyard's own Prometheus (`railyard prometheus up`, `railyard demo`) loads them; for your
own Prometheus, `recording_rules(dialect)` is the file to add to ``rule_files`` (see
docs/recording-rules.md). Without them the client falls back to the full expression.
"""

from __future__ import annotations

from backend.metrics import catalog

RULES_FILE = "railyard-recording.rules.yml"
RULES_INTERVAL_SECONDS = 60.0
BY = "broker"  # the rules are written for the label the scrape config puts on brokers
RECORDED = {  # catalog concept -> the series its rule records
    "replica_bytes_behind": "railyard:replica_bytes_behind:sum",
    "replica_lag_sum_per_broker": f"railyard:replica_lag:sum_by_{BY}",
}


def recording_rules(dialect: str = "strimzi",
                    interval: float = RULES_INTERVAL_SECONDS) -> dict:
    """The rule file (Prometheus's YAML as a dict) for a naming dialect, evaluated every
    ``interval`` seconds."""
    return {"groups": [{"name": "railyard-recording", "interval": f"{round(interval * 1000)}ms",
                        "rules": [
        {"record": record, "expr": catalog.promql(concept, dialect, by=BY)}
        for concept, record in RECORDED.items()]}]}


def recorded_name(concept: str, by: str) -> str | None:
    """The recorded series standing for ``concept``, when a rule records it for ``by``."""
    return RECORDED.get(concept) if by == BY else None
