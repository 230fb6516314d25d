"""20 API clients at once (8 operators proposing, 12 approvers approving and rejecting the
newest plans, so decisions collide) over real HTTP, for a bounded few seconds, on SQLite
and on PostgreSQL: no lost or duplicated transition (audit rows = successful transitions),
each plan decided at most once, the audit chain intact, and no answer but 2xx or 409."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest
import requests
from werkzeug.security import generate_password_hash
from werkzeug.serving import make_server

from backend.services import plans as plan_service
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from dashboard.config import parse_config
from tests.servers import free_port

pytestmark = pytest.mark.integration

OPERATORS = [f"op{i}" for i in range(8)]
APPROVERS = [f"ap{i}" for i in range(12)]
SECONDS = 4.0  # how long the clients hammer the API
TRANSITIONS = ("propose", "approve", "reject")
STATE_AFTER = {None: "proposed", "approve": "approved", "reject": "rejected"}


@pytest.fixture
def served(store_url, tmp_path):
    from dashboard import runtime
    from dashboard.app import create_app

    twin = TwinCluster(generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster="demo"))
    users = [{"name": n, "role": "operator" if n in OPERATORS else "approver",
              "password_hash": generate_password_hash(f"pw-{n}", "pbkdf2:sha256:1000")}
             for n in OPERATORS + APPROVERS]
    doc = {"clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                     "url": "http://127.0.0.1:9"}}],
           "cache": {"background_dir": str(tmp_path / "cache")},
           "store": {"url": store_url},
           "auth": {"users": users, "secret_key_file": str(tmp_path / "key")}}
    app = create_app(parse_config(doc, "cfg"), gateways={"demo": TwinGateway(twin)})
    store = runtime.current().plan_store()
    server = make_server("127.0.0.1", free_port(), app.server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    snap = twin.assignment()
    replicas = snap.replicas_of(snap.partition_row("topic-0", 0))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas][:len(replicas)]
    body = {"cluster": "demo", "kind": "reassignment", "plan": {"version": 1, "partitions": [
        {"topic": "topic-0", "partition": 0, "replicas": spare}]}}
    try:
        yield f"http://127.0.0.1:{server.port}/api/v1", store, body
    finally:
        server.shutdown()
        thread.join(10)
        store.close()


def test_twenty_clients_lose_and_duplicate_no_transition(served):
    url, store, body = served
    proposed: list[tuple[int, str]] = []  # (id, sha256), newest last
    lock = threading.Lock()
    done, statuses, failures, refusals = Counter(), Counter(), [], Counter()
    clients = OPERATORS + APPROVERS
    ready = threading.Barrier(len(clients))
    stop_at = []

    def client(name: str, seed: int) -> None:
        rng = random.Random(seed)
        http = requests.Session()
        http.auth = (name, f"pw-{name}")
        http.get(f"{url}/plans?state=completed", timeout=60).raise_for_status()  # signed in
        if ready.wait() == 0:
            stop_at.append(time.monotonic() + SECONDS)
        ready.wait()
        while time.monotonic() < stop_at[0]:
            if name in OPERATORS:
                answer = http.post(f"{url}/plans", json=body, timeout=30)
                action = "propose"
                if answer.status_code == 201:
                    with lock:
                        proposed.append((answer.json()["id"], answer.json()["sha256"]))
            else:
                with lock:
                    recent = proposed[-3:]  # the newest few: approvers collide on them
                if not recent:
                    time.sleep(0.01)
                    continue
                plan_id, sha = rng.choice(recent)
                action = rng.choice(("approve", "reject"))
                answer = http.post(f"{url}/plans/{plan_id}/{action}",
                                   json={"sha256": sha, "comment": name}, timeout=30)
            with lock:
                statuses[answer.status_code] += 1
                if answer.status_code in (200, 201):
                    done[action] += 1
                elif answer.status_code == 409:
                    error = answer.json()["error"]
                    refusals["lost a race" if "while you acted" in error
                             else "already decided"] += 1
                else:
                    failures.append((action, answer.status_code, answer.text[:200]))

    threads = [threading.Thread(target=client, args=(name, i))
               for i, name in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    print(f"\n{dict(done)} answers {dict(statuses)} 409s {dict(refusals)}")
    assert done["propose"] > 0 and done["approve"] + done["reject"] > 0

    audited = Counter(e.action for e in plan_service.audit_entries(store, limit=1_000_000))
    assert {a: audited[a] for a in TRANSITIONS} == {a: done[a] for a in TRANSITIONS}
    plans = [plan_service.get(store, p.id)
             for p in plan_service.list_plans(store, limit=1_000_000)]
    assert len(plans) == done["propose"]
    for plan in plans:
        assert len(plan.decisions) <= 1, plan.id
        decided = plan.decisions[0].decision if plan.decisions else None
        assert plan.state == STATE_AFTER[decided], plan.id
    assert sum(len(p.decisions) for p in plans) == done["approve"] + done["reject"]
    assert store.verify_audit()["intact"]
