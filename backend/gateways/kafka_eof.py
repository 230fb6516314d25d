"""kafka-python 3.0's transports drop the last bytes a broker sends before closing.

Their ``_sock_recv`` reads until the socket would block and returns ``(data, error)``; at
end of stream the error is "socket disconnected" and the read loop aborts without handing
``data`` to the protocol. Apache Kafka answers a failed SASL login with an error response
and then closes the connection, so the two usually arrive together: the
SASL_AUTHENTICATION_FAILED answer ("Invalid username or password") is lost and a wrong
password looks like a flaky network until the bootstrap timeout. Here the bytes are
delivered first and the end of stream reported on the next read (the socket stays
readable at end of stream, so the loop comes back at once).
"""

from __future__ import annotations

from kafka.net import transport

_PENDING = "_railyard_eof"


def _deliver_before_eof(recv):
    def _sock_recv(self):
        pending = getattr(self, _PENDING, None)
        if pending is not None:
            setattr(self, _PENDING, None)
            return b"", pending
        data, err = recv(self)
        if data and err is not None:
            setattr(self, _PENDING, err)
            return data, None
        return data, err
    _sock_recv.railyard_patched = True
    return _sock_recv


def patch() -> None:
    """Apply once per process to the TCP and SSL transports (idempotent)."""
    for cls in (transport.KafkaTCPTransport, transport.KafkaSSLTransport):
        own = cls.__dict__.get("_sock_recv")
        if own is not None and not getattr(own, "railyard_patched", False):
            cls._sock_recv = _deliver_before_eof(own)


patch()
