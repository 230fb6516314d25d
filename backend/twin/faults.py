"""Gateway faults a scenario injects into the twin: a Kafka error code (or a timeout)
answered to some gateway calls for a while, so an executor's retries and failures are
tested against the twin itself.

A fault names the gateway operation (one of OPERATIONS: the calls an executor makes,
or "*"), the error, and how long it
lasts: ``times`` calls, or until simulated second ``until`` (both: whichever ends first).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from backend.errors import BadInput
from backend.gateways.base import GatewayError

OPERATIONS = frozenset({"*", "describe_configs", "list_reassignments", "alter_configs",
                        "alter_reassignments", "cancel_reassignments",
                        "delete_partitions", "create_topics"})


@dataclass
class Fault:
    op: str
    error: str
    message: str
    times: int | None  # calls left to fail; None = until ``until``
    until: float | None  # simulated seconds; None = until ``times`` runs out


def validate(op: object, error: object, times: object, lasting: bool) -> None:
    """BadInput unless ``op`` is an operation, ``error`` a Kafka error name (e.g.
    NOT_CONTROLLER) and the fault has a count of calls or a duration (``lasting``)."""
    if op not in OPERATIONS:
        raise BadInput(f"gateway fault: operation must be one of {sorted(OPERATIONS)}, "
                       f"got {op!r}")
    if not isinstance(error, str) or not re.fullmatch(r"[A-Z][A-Z0-9_]*", error):
        raise BadInput(f"gateway fault: 'error' must be a Kafka error name such as "
                       f"NOT_CONTROLLER, got {error!r}")
    if times is None and not lasting:
        raise BadInput("gateway fault: give 'calls' (how many) or 'for' (a duration)")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int)
                              or times < 1):
        raise BadInput(f"gateway fault: 'calls' must be a whole number >= 1, got {times!r}")


class GatewayFaults:
    """The faults in force on one twin (thread-safe)."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self.injected = 0  # calls answered with a fault so far

    def add(self, op: str, error: str, times: int | None = None, until: float | None = None,
            message: str = "") -> None:
        validate(op, error, times, until is not None)
        with self._lock:
            self._faults.append(Fault(op, error, message or "injected by the scenario",
                                      None if times is None else int(times), until))

    def check(self, op: str, now: float) -> None:
        """Raise the first fault in force for ``op`` at simulated second ``now``."""
        if not self._faults:
            return
        with self._lock:
            self._faults = [f for f in self._faults if (f.times is None or f.times > 0)
                            and (f.until is None or now < f.until)]
            for f in self._faults:
                if f.op in ("*", op):
                    if f.times is not None:
                        f.times -= 1
                    self.injected += 1
                    raise GatewayError(f.error, f.message)
