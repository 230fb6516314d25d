"""railyard demo stops what it started even when a kill of its process group took Spark's
JVM first (stopping the session then raised, and both Prometheus servers were left)."""

from __future__ import annotations

import signal

from backend.spark import session
from dashboard import demo_stack, server


def test_a_signal_to_the_group_still_stops_the_stack(monkeypatch, tmp_path):
    stopped = []

    class Stack:
        def __init__(self, settings):
            pass

        def start(self, say):
            return object()

        def gateways(self):
            return {}

        def running(self):
            return True

        def stop(self, say):
            stopped.append("stack")

    def serve(*_a, **_k):
        signal.raise_signal(signal.SIGTERM)  # the kill arrives while serving

    def spark_gone():
        raise ConnectionRefusedError(111, "Connection refused")  # py4j, JVM already dead

    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    monkeypatch.setattr(demo_stack, "DemoStack", Stack)
    monkeypatch.setattr(server, "serve", serve)
    monkeypatch.setattr(session, "stop_session", spark_gone)
    try:
        demo_stack.run(demo_stack.DemoSettings(home=tmp_path, warm_spark=False))
        # a second signal during the clean-up is ignored, not a KeyboardInterrupt
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    assert stopped == ["stack"]


