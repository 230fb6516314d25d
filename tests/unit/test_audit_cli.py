"""`railyard audit verify`: exit 0 on an intact chain, 1 naming where it breaks, 2 for a
bad config, 3 when the store does not answer."""

from __future__ import annotations

import json

import yaml
from sqlalchemy import update

from backend.services import plans
from backend.store.schema import audit
from backend.store.store import open_store
from tests.plan_helpers import APPROVER, OPERATOR, T0, moves, orders_cluster
from tests.unit.helpers import run_cli

CLUSTERS = [{"name": "c1", "gateway": {"type": "twin", "url": "http://127.0.0.1:1"}}]


def config(tmp_path, url):
    path = tmp_path / "railyard.yaml"
    path.write_text(yaml.safe_dump({"clusters": CLUSTERS, "store": {"url": url}}))
    return path


def test_verify_intact_then_broken(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/r.db"
    store = open_store(url)
    snap = orders_cluster()
    plan = plans.propose(store, OPERATOR, cluster="c1", kind="reassignment",
                         content=moves(("orders", 0, [3, 4])), preview={}, snapshot=snap,
                         now=T0)
    plans.approve(store, APPROVER, plan.id, sha256=plan.sha256, topics_of=lambda *_: snap,
                  now=T0)
    code, out, _ = run_cli(capsys, "audit", "verify", "--config", config(tmp_path, url))
    assert code == 0 and json.loads(out) == {"intact": True, "rows": 2, "broken_at": None,
                                             "reason": None}
    with store.write() as conn:  # someone rewrites history: the approval was "bert"'s
        conn.execute(update(audit).where(audit.c.id == 2).values(user="bert"))
    store.close()
    code, out, _ = run_cli(capsys, "audit", "verify", "--config", config(tmp_path, url))
    assert code == 1
    assert json.loads(out)["broken_at"] == 2
    assert "audit row 2: its content does not match its hash" in json.loads(out)["reason"]


def test_bad_config_and_unreachable_store(tmp_path, capsys):
    code, _, err = run_cli(capsys, "audit", "verify", "--config", tmp_path / "none.yaml")
    assert code == 2 and "no such config file" in err
    url = "postgresql+psycopg://railyard:secret@127.0.0.1:1/railyard?connect_timeout=2"
    code, _, err = run_cli(capsys, "audit", "verify", "--config", config(tmp_path, url))
    assert code == 3 and err.startswith("railyard audit: unavailable: Plan store: ")
    assert "secret" not in err and len(err.strip().splitlines()) == 1
