"""A second `make demo` found the first one's plan still executing: its cluster (the twin,
or the demo's own Kafka) had started anew, yet the executor resumed the plan, put the old
cluster's throttles back on the new one and failed it ("topic-000-1 is not at its
target"), and plans piled up run after run. The demo's plan store now starts anew with
its cluster; the last one is set aside whole, its audit chain still verifiable."""

from __future__ import annotations

import json

from backend.services import plans
from backend.store.store import open_store
from dashboard.demo_stack import demo_store, set_aside_store
from tests.unit.helpers import run_cli
from tests.unit.test_audit_cli import approved_plan


def test_a_new_demo_starts_with_a_new_store_and_keeps_the_last_one_aside(tmp_path, capsys):
    home = tmp_path / "demo"
    home.mkdir()
    assert set_aside_store(home) is None  # the first start: nothing to set aside
    s = demo_store(home)
    store = open_store(s.url, key_file=s.audit_key_file, checkpoints=s.audit_checkpoints)
    plan = approved_plan(store)
    store.close()

    aside = set_aside_store(home)
    assert aside == home / "previous"
    assert not (home / "railyard.db").exists()
    assert not (home / "audit-checkpoints.jsonl").exists()
    fresh = open_store(s.url, key_file=s.audit_key_file, checkpoints=s.audit_checkpoints)
    assert plans.list_plans(fresh, cluster="c1", limit=10) == []
    fresh.close()
    old = demo_store(aside)
    kept = open_store(old.url, key_file=old.audit_key_file, checkpoints=old.audit_checkpoints)
    [again] = plans.list_plans(kept, cluster="c1", limit=10)
    assert (again.id, again.state) == (plan.id, "approved")
    kept.close()
    code, out, err = run_cli(capsys, "audit", "verify", "--demo", aside)
    assert code == 0 and json.loads(out)["intact"] and json.loads(out)["rows"] == 3, err

    set_aside_store(home)  # the demo after: its (new) store replaces the one aside
    gone = open_store(old.url, key_file=old.audit_key_file, checkpoints=old.audit_checkpoints)
    assert plans.list_plans(gone, cluster="c1", limit=10) == []
    gone.close()
