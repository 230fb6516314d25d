"""A broker that came back is unknown to a client's old metadata: kafka-python raises
UnknownBrokerIdError before sending (net/manager.py), and the gateway asks once more on a
fresh client instead of failing the executor's step (seen on Apache Kafka 4.1.1 right
after a broker was stopped and started again). A read whose connection was lost is
asked once more the same way; a write is not sent again."""

from __future__ import annotations

import kafka.errors as Errors
import pytest

from backend.errors import Unavailable
from backend.gateways.config import parse_kafka
from backend.gateways.kafka import KafkaGateway


class FakeAdmin:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def close(self) -> None:
        self.log.append("close")


def _gateway(monkeypatch, log: list[str]) -> KafkaGateway:
    gw = KafkaGateway(parse_kafka({"bootstrap_servers": ["127.0.0.1:1"]}, str), "k")
    monkeypatch.setattr(gw, "_connect", lambda: (log.append("connect"), FakeAdmin(log))[1])
    return gw


def test_a_broker_unknown_to_the_clients_metadata_is_asked_once_more_afresh(monkeypatch):
    log: list[str] = []
    gw = _gateway(monkeypatch, log)
    answers = iter([Errors.UnknownBrokerIdError(2), "configs of broker 2"])

    def call(_admin):
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    assert gw._call("DescribeConfigs", call) == "configs of broker 2"
    assert log == ["connect", "close", "connect"]


def test_twice_unknown_is_one_line_unavailable(monkeypatch):
    log: list[str] = []
    gw = _gateway(monkeypatch, log)

    def call(_admin):
        raise Errors.UnknownBrokerIdError(2)

    with pytest.raises(Unavailable, match=r"^Kafka at .*: DescribeConfigs failed: "
                                          r"UnknownBrokerIdError"):
        gw._call("DescribeConfigs", call)
    assert log == ["connect", "close", "connect", "close"]


def _failing_once(error: Exception, answer: str):
    answers = iter([error, answer])

    def call(_admin):
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a
    return call


def test_a_read_whose_broker_went_away_is_asked_once_more_afresh(monkeypatch):
    """Seen on Apache Kafka 4.1 in CI: broker 2, the "controller" the client sent
    ListPartitionReassignments to, stopped while the request was out ('socket
    disconnected', then ECONNREFUSED); a fresh client asks a live broker."""
    log: list[str] = []
    gw = _gateway(monkeypatch, log)
    call = _failing_once(Errors.KafkaConnectionError("socket disconnected"), "in flight")
    assert gw._call("ListPartitionReassignments", call, read=True) == "in flight"
    assert log == ["connect", "close", "connect"]


def test_a_write_whose_broker_went_away_is_not_sent_again(monkeypatch):
    """The lost connection may have delivered it: the executor reads the cluster before
    it tries again (backend/executor/retry.py)."""
    log: list[str] = []
    gw = _gateway(monkeypatch, log)
    call = _failing_once(Errors.KafkaConnectionError("socket disconnected"), "sent twice")
    with pytest.raises(Unavailable, match=r"AlterPartitionReassignments failed: "
                                          r"KafkaConnectionError: socket disconnected$"):
        gw._call("AlterPartitionReassignments", call)
    assert log == ["connect", "close"]
