"""The Kafka demo's workload follows the shrink migrations of its plan store, as the
application an operator switches: a migration's move ({old topic: new topic}) is there
once its step 1 has created the new topic, not before, and stays once it ended (the
application stays switched); other clusters' migrations and reassignments are not moves.
The migration runs on the twin through the executor thread, as in test_shrink_execution."""

from __future__ import annotations

from datetime import timedelta

from backend.executor.thread import ExecutorThread
from backend.services import execution, plan_preview, plans
from dashboard.demo_kafka import CLUSTER, KafkaDemo, migration_moves
from tests.plan_helpers import APPROVER, OPERATOR, T0
from tests.unit.test_shrink_execution import World


class DemoWorld(World):
    """The rig of test_shrink_execution, its plans on the demo's cluster name."""

    def new_thread(self) -> ExecutorThread:
        return execution.executor_thread(self.store, [CLUSTER], lambda _c: self.gw,
                                        lambda _c: self.twin.assignment(), clock=self.now,
                                        holder="test")

    def proposed(self, draft) -> int:
        snap = self.twin.assignment()
        plan = plans.propose(self.store, OPERATOR, cluster=CLUSTER, kind=draft.kind,
                             content=draft.content, preview=draft.preview, snapshot=snap,
                             now=T0, throttle=draft.content.get("throttle"))
        plans.approve(self.store, APPROVER, plan.id, sha256=plan.sha256,
                      topics_of=lambda *_: snap, now=T0 + timedelta(seconds=1))
        return plan.id

    def approved(self, delay_ms: int = 0, keep: int = 2) -> int:
        return self.proposed(plan_preview.from_shrink(self.twin.assignment(), "a", keep,
                                                      delay_ms=delay_ms))


def test_the_demo_moves_a_topic_once_its_migration_created_the_new_one(tmp_path):
    w = DemoWorld(tmp_path, enable=False)
    demo = KafkaDemo(tmp_path / "kafka", cluster=object())
    assert demo.moves() == {}  # no store followed yet
    demo.follow_migrations(w.store)
    plan_id = w.approved()
    assert demo.moves() == {}  # approved, not running
    w.execute(plan_id, migration=True)
    assert demo.moves() == {}  # running, the new topic not created yet
    w.cycle(3)
    assert w.twin.snap.has_topic("a.p2") and w.shrink(plan_id)["steps"][0]["done"]
    assert demo.moves() == {"a": "a.p2"}
    assert migration_moves(w.store, "elsewhere") == {}

    # the operator's steps, then completed: the application stays switched
    w.check(plan_id, 1)
    w.check(plan_id, 2)
    w.gw.delete_topics(["a"])
    w.check(plan_id, 3)
    w.cycle()
    assert plans.get(w.store, plan_id).state == "completed"
    assert demo.moves() == {"a": "a.p2"}
    w.store.close()


def test_a_reassignment_running_on_the_demo_cluster_is_no_move(tmp_path):
    w = DemoWorld(tmp_path, enable=False)
    snap = w.twin.assignment()
    draft = plan_preview.from_kafka_json(
        snap, {"version": 1, "partitions": [{"topic": "b", "partition": 0,
                                             "replicas": [1, 4]}]}, throttle=1_000_000)
    plan_id = w.proposed(draft)
    w.execute(plan_id)
    w.cycle(2)
    assert plans.get(w.store, plan_id).state in ("executing", "completed")
    assert migration_moves(w.store) == {}
    w.store.close()


def test_the_demo_stack_has_the_kafka_workload_follow_its_plan_store(tmp_path):
    """The store the stack gives the Kafka demo is the demo's plan store (the one its
    dashboard serves, `railyard audit verify --demo` reads), closed when the demo stops."""
    from dashboard.config import ClusterConfig, Gateway, PrometheusSettings
    from dashboard.demo_stack import DemoSettings, DemoStack

    home = tmp_path / "demo"
    home.mkdir()
    stack = DemoStack(DemoSettings(home=home, warm_spark=False))
    stack.kafka = KafkaDemo(home / "kafka", cluster=object())
    config = stack._config(ClusterConfig(CLUSTER, Gateway("twin"),
                                         PrometheusSettings("http://127.0.0.1:9")),
                           "http://127.0.0.1:9", home, {"olivia": ("operator", "pw")})
    stack._follow_migrations(config)
    store = stack.kafka.store
    assert store is not None
    assert store.engine.url.database == str((home / "railyard.db").resolve())
    assert stack.kafka.moves() == {}
    said: list[str] = []
    stack.kafka.stop(said.append)
    assert stack.kafka.store is None and said == []
