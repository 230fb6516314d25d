"""One API client of bench_api, in a process of its own: only the standard library, so
twenty of them start without importing Railyard (spawned, they import this module)."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import threading
import time


def run(port: int, user: str, plans: dict[int, str], ready, finished, answers) -> None:
    """One API client (its own process, as clients are their own programs): sign in,
    wait for the others, approve its plans one after another; put its latencies in ms.
    It exits only when every client has finished: a Python process's exit costs tens of
    ms of CPU, which the clients still measuring would count as the server's latency."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        token = base64.b64encode(f"{user}:pw-{user}".encode()).decode()
        headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
        conn.request("GET", "/api/v1/plans?state=completed", headers=headers)
        _read(conn.getresponse())
    except Exception as e:  # the others must not wait for it: say why, in a line
        answers.put(f"{user} signing in: {type(e).__name__}: {e}")
        ready.abort()
        return
    ready.wait()
    took = []
    try:
        for plan_id, sha in plans.items():
            t0 = time.perf_counter()
            conn.request("POST", f"/api/v1/plans/{plan_id}/approve",
                         json.dumps({"sha256": sha}), headers)
            _read(conn.getresponse())
            took.append((time.perf_counter() - t0) * 1000)
    except Exception as e:
        answers.put(f"{user} approving: {type(e).__name__}: {e}")
        finished.abort()
        return
    answers.put(took)
    with contextlib.suppress(threading.BrokenBarrierError):  # another client failed
        finished.wait()


def _read(answer) -> bytes:
    body = answer.read()
    if answer.status != 200:
        raise RuntimeError(f"HTTP {answer.status}: {body[:200]!r}")
    return body
