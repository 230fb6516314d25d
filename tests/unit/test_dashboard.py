"""Dashboard config validation (one-line errors), unique ids, URL state, layouts build."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from backend.errors import BadInput
from backend.services import whatif
from backend.twin.examples import demo_snapshot
from components import timerange, urlstate
from dashboard import ids
from dashboard.config import load_config, parse_config

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"clusters": [{"name": "a", "gateway": {"type": "twin", "url": "http://127.0.0.1:8070"},
                      "prometheus": {"url": "http://127.0.0.1:9090"}}]}


def test_example_config_is_valid():
    config = load_config(ROOT / "config" / "railyard.example.yaml")
    assert [c.name for c in config.clusters] == ["demo"]
    demo = config.clusters[0]
    assert demo.prometheus.dialect == "strimzi"
    # the example reads `railyard twin serve --snapshot demo` at the CLI's default API port
    assert demo.limits.max_broker_partitions == demo_snapshot().limits.max_broker_partitions
    assert demo.gateway.url == "http://127.0.0.1:9400" and demo.snapshot is None
    assert config.server.port == 8050 and config.cache.type == "simple"
    assert (config.server.workers, config.server.threads) == (1, 16)


def test_several_server_processes_share_a_redis_cache():
    doc = {**GOOD, "server": {"workers": 3, "threads": 6},
           "cache": {"type": "redis", "redis_url": "redis://127.0.0.1:6379/0"}}
    server = parse_config(doc, "cfg").server
    assert (server.workers, server.threads) == (3, 6)


def test_the_redis_password_comes_from_its_secret_and_only_the_clients_see_it(tmp_path):
    """Redis with requirepass (the compose stack's): the password is read from a file or a
    variable, quoted into the URL the clients connect with, and in no repr or config URL."""
    secret = tmp_path / "redis-password"
    secret.write_text("p@ss:w/rd%\n")
    for url, client in (("redis://r:6379/0", "redis://:p%40ss%3Aw%2Frd%25@r:6379/0"),
                        ("redis://railyard@r:6379/0",  # a Redis 6 ACL user keeps its name
                         "redis://railyard:p%40ss%3Aw%2Frd%25@r:6379/0")):
        cache = parse_config({**GOOD, "cache": {
            "type": "redis", "redis_url": url, "redis_password": {"file": str(secret)}}},
            "cfg").cache
        assert cache.redis_url == url and cache.client_url() == client
        assert "p@ss" not in repr(cache)
    plain = parse_config({**GOOD, "cache": {"type": "redis", "redis_url": "redis://r:6379/0"}},
                         "cfg").cache
    assert plain.client_url() == "redis://r:6379/0"


@pytest.mark.parametrize(("doc", "message"), [
    ({}, "cfg: clusters: required"),
    ({"clusters": []}, "cfg: clusters: list at least one cluster"),
    ({"clusters": [{"name": "a"}]}, "cfg: clusters[0].gateway: required"),
    ({**GOOD, "extra": 1}, "cfg: extra: unknown key"),
    ({"clusters": [{**GOOD["clusters"][0], "prometheus": {"url": "http://p:9090",
                                                          "dialect": "jmx"}}]},
     "cfg: clusters[0].prometheus.dialect: expected one of strimzi, confluent, got 'jmx'"),
    ({"clusters": [{**GOOD["clusters"][0], "gateway": {"type": "twin", "url": "p:1"}}]},
     "cfg: clusters[0].gateway.url: expected an http(s)://host:port URL, got 'p:1'"),
    ({"clusters": [{"name": "a", "gateway": {"type": "kafka", "bootstrap_servers": "k1"}}]},
     "cfg: clusters[0].gateway.bootstrap_servers: expected host:port entries"),
    ({"clusters": [{**GOOD["clusters"][0], "limits": {"max.broker.partitions": -1}}]},
     "cfg: clusters[0].limits.max.broker.partitions: expected an integer >= 0, got -1"),
    # KIP-578's max.broker.partitions and max.partitions are ints: a limit past 2^31-1 was
    # taken and every proposal then failed with a 500 (OverflowError)
    ({"clusters": [{**GOOD["clusters"][0], "limits": {"max.partitions": 99999999999999999999}}]},
     "cfg: clusters[0].limits.max.partitions: expected an integer from 0 to 2147483647, got "
     "99999999999999999999"),
    ({"clusters": [{**GOOD["clusters"][0], "quota": {"window_num": 99999999999}}]},
     "cfg: clusters[0].quota.window_num: expected an integer from 1 to 2147483647, got "
     "99999999999"),
    ({**GOOD, "auth": "nne"},
     "cfg: auth: expected none, or a mapping with users or trusted_header, got 'nne'"),
    ({**GOOD, "server": {"port": 65536}},
     "cfg: server.port: expected an integer from 1 to 65535, got 65536"),
    ({"clusters": [GOOD["clusters"][0], GOOD["clusters"][0]]},
     "cfg: clusters: the name 'a' is used twice"),
    ({**GOOD, "cache": {"type": "redis"}}, "cfg: cache.redis_url: required when type is redis"),
    ({**GOOD, "cache": {"type": "redis", "redis_url": "redis://:s3cret@r:6379/0"}},
     "cfg: cache.redis_url: no password in the URL (a secret never goes in the config); "
     "give redis_password: {file|env}"),
    ({**GOOD, "cache": {"type": "redis", "redis_url": "redis://r:6379/0",
                        "redis_password": "s3cret"}},
     "cfg: cache.redis_password: never write a secret in the config"),
    ({**GOOD, "server": {"workers": 0}},
     "cfg: server.workers: expected an integer >= 1, got 0"),
    ({**GOOD, "server": {"threads": "many"}},
     "cfg: server.threads: expected an integer >= 1, got 'many'"),
    ({**GOOD, "server": {"workers": 2}},
     "cfg: server.workers: 2 processes need cache.type: redis"),
])
def test_config_errors_are_one_line(doc, message):
    with pytest.raises(BadInput) as e:
        parse_config(doc, "cfg")
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_bad_yaml_names_the_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("clusters:\n  - name: a\n    gateway: {type: twin\n")
    with pytest.raises(BadInput, match=r"c.yaml: line \d+: not valid YAML"):
        load_config(path)


def test_a_key_given_twice_is_refused_naming_it_and_its_line(tmp_path, capsys):
    """The second max.broker.partitions (1) silently won, and `alerts generate` wrote an
    alert that always fires."""
    from tests.unit.helpers import run_cli
    path = tmp_path / "c.yaml"
    path.write_text("clusters:\n  - name: a\n    gateway: {type: twin, url: 'http://127.0.0.1:9'}\n"
                    "    limits:\n      max.broker.partitions: 12500\n"
                    "      max.broker.partitions: 1\n")
    with pytest.raises(BadInput, match=r"c.yaml: line 6: max.broker.partitions given twice$"):
        load_config(path)
    code, out, err = run_cli(capsys, "alerts", "generate", "--config", path,
                             "--out", tmp_path / "alerts")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "line 6: max.broker.partitions given twice" in err
    assert not (tmp_path / "alerts").exists()


def test_a_merge_may_still_be_overridden(tmp_path):
    from backend.model.yamlfile import load_yaml
    assert load_yaml("a: &x {b: 1, c: 2}\nd:\n  <<: *x\n  b: 3\n")["d"] == {"b": 3, "c": 2}


def test_component_ids_are_unique():
    values = [v for k, v in vars(ids).items() if k.isupper()]
    assert len(values) == len(set(values))


def test_url_state_round_trip():
    search = urlstate.updated("?cluster=a&range=6h", range="abs", **{"from": "2024-05-01T12:00"})
    assert urlstate.parse(search) == {"cluster": "a", "range": "abs", "from": "2024-05-01T12:00"}
    assert urlstate.shared("?cluster=a&tab=x&range=1h") == "?cluster=a&range=1h"


def test_time_windows():
    w = timerange.window("6h", None, None, now=100_000.0)
    # a relative window ends on the 15 s grid
    assert (w.start, w.end, w.step, w.refreshing) == (99_990 - 21_600, 99_990, 90, True)
    a = timerange.window("abs", "2024-05-01T12:00", "2024-05-01T13:00", now=0)
    assert a.end - a.start == 3600 and not a.refreshing
    with pytest.raises(BadInput, match="to must be after from"):
        timerange.window("abs", "2024-05-01T13:00", "2024-05-01T12:00", now=0)
    # a minute to a year and a day: a 54-year report kept Prometheus busy for 25 s
    for start, end in (("2024-05-01T12:00", "2024-05-01T12:00:30"),
                       ("1970-01-01T00:00", "2024-01-01T00:00")):
        with pytest.raises(BadInput, match="give a window from 1 minute to 366 days long"):
            timerange.window("abs", start, end, now=0)
    assert timerange.window("abs", "2023-05-01T12:00", "2024-05-01T12:00", now=0).end
    assert timerange.window("abs", "2024-05-01T12:00", "2024-05-01T12:01", now=0).end
    with pytest.raises(BadInput, match="range 'x'"):
        timerange.window("x", None, None, now=0)
    # a window that starts after now has nothing in it: said once, not "no data yet" per chart
    may_2024 = timerange.parse_time("2024-05-01T12:30", "now")
    assert timerange.viewable("abs", "2024-05-01T12:00", "2024-05-01T13:00", may_2024) == a
    with pytest.raises(BadInput, match=r"^from: 2024-05-01T12:00 UTC has not happened yet$"):
        timerange.viewable("abs", "2024-05-01T12:00", "2024-05-01T13:00", a.start - 1)


def test_sweep_grid_parsing():
    assert whatif.parse_grid("throttle", "throttle=1e6, 5e6; window_num=11") == \
        {"throttle": [1000000, 5000000], "window_num": [11]}
    with pytest.raises(BadInput, match="grid: 'rate=1': expected KEY=V1,V2"):
        whatif.parse_grid("throttle", "rate=1")
    # a key listed twice kept only its last list, in silence
    with pytest.raises(BadInput, match=r"^grid: throttle is given twice: list all its values"):
        whatif.parse_grid("throttle", "throttle=1e6; window_num=11; throttle=5e6")
    for bad in ("nan", "inf", "1_000", "\u0661"):  # float() reads each of them
        with pytest.raises(BadInput, match="grid: throttle: values must be numbers"):
            whatif.parse_grid("throttle", f"throttle=1e6,{bad}")
    with pytest.raises(BadInput, match="workload: list topics"):
        whatif.parse_workload(" ")
    # the page's field is named, not the CLI's --topic
    with pytest.raises(BadInput, match=r"^workload 'clicks:x:3': PARTITIONS and RF must be "):
        whatif.parse_workload("orders:1:3, clicks:x:3")
    with pytest.raises(BadInput, match=r"^workload: topic name 'bad topic!' contains ' '"):
        whatif.parse_workload("bad topic!:1:3")
    # a topic the cluster has: Kafka refuses to create it, and each row said "rejected"
    snap = demo_snapshot()
    with pytest.raises(BadInput, match=r"^workload: topic-001 already in cluster 'demo': a "
                                       "limits sweep places new topics"):
        whatif.sweep_spec("limits", "add_brokers=0", "topic-001:3:3, new:3:3", None, None, snap,
                          None, "unused")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from backend.model.io import save_snapshot
    from backend.twin.examples import demo_snapshot
    from dashboard.app import create_app

    tmp = tmp_path_factory.mktemp("app")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    doc = {"clusters": [{**GOOD["clusters"][0], "snapshot": str(tmp / "demo.parquet")}],
           "cache": {"background_dir": str(tmp / "cache")},
           "store": {"url": f"sqlite:///{tmp / 'plans.db'}"}}  # not the checkout's var/
    return create_app(parse_config(doc))


def served_page(path: str) -> ModuleType:
    """The page module the app serves at ``path``. Dash loads pages/ under names made from
    the checkout's path; `import pages.x` would run a second copy, whose page takes the
    same path and makes every later app in this process answer 500."""
    import dash

    return sys.modules[next(p["module"] for p in dash.page_registry.values()
                            if p["path"] == path)]


def test_every_page_layout_builds(app):
    import dash

    paths = {p["path"]: p for p in dash.page_registry.values()}
    assert set(paths) == {"/", "/brokers", "/throttles", "/quotas", "/what-if",
                          "/reassignments", "/shrinks", "/plans", "/queue", "/audit", "/plans/none",
                          "/capacity"}
    for page in paths.values():
        assert page["layout"](range="6h") is not None


def test_index_serves(app):
    client = app.server.test_client()
    assert client.get("/").status_code == 200
    assert client.get("/_dash-layout").status_code == 200


def test_limit_bars_label_every_bar_only_while_few():
    from components import charts

    few = charts.limit_bars([str(b) for b in range(9)], [100] * 8 + [95], 100, "t")
    assert all(few.data[0].text)
    values = [50] * 98 + [95, 120]  # one near, one over the limit of 100
    many = charts.limit_bars([str(b) for b in range(100)], values, 100, "t")
    labelled = [t for t in many.data[0].text if t]
    assert labelled == ["95 (95%)", "120 (120%)"]


def test_charts_use_the_light_template_with_fixed_margins():
    import plotly.io as pio

    from components import charts

    fig = charts.rate_vs_configured(["1", "2"], [1e6, 0], [5e5, 0], [1e6, None], [2e6, None],
                                    "t")
    assert fig.layout.template.layout.xaxis.automargin is False
    # one configured rate per side: the legend names the config and its value
    assert [t.name for t in fig.data][2:] == ["leader.replication.throttled.rate = 1 MB/s",
                                              "follower.replication.throttled.rate = 2 MB/s"]
    differ = charts.rate_vs_configured(["1", "2"], [1e6, 0], [5e5, 0], [1e6, 5e5],
                                       [None, None], "t")
    assert differ.data[2].name == "configured leader rate"  # each tick says its own
    assert list(differ.data[2].text) == ["1 MB/s", "500 kB/s"]
    assert len(pio.to_json(fig)) < 6000  # no polar, 3-D or map template in every figure


def test_vendored_plotly_bundle_is_the_version_plotly_py_ships():
    """assets/vendor/plotly-basic.min.js replaces the full bundle in the browser: figures
    built by plotly.py must meet the plotly.js version it was made for."""
    import re

    import plotly

    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    basic = ROOT / "assets" / "vendor" / "plotly-basic.min.js"

    def version(path: Path) -> str:
        return re.search(r"plotly\.js.*? v(\d+\.\d+\.\d+)", path.read_text()[:400]).group(1)

    assert version(basic) == version(full)


def _update(client, body) -> tuple[int, dict]:
    """POST a callback request with the session's CSRF token, as the page would."""
    import json

    from dashboard import auth
    from dashboard.runtime import current

    token = client.get_cookie(auth.csrf_cookie_name(current().config.server.port)).value
    r = client.post("/_dash-update-component", data=json.dumps(body),
                    content_type="application/json", headers={auth.CSRF_HEADER: token})
    return r.status_code, r.get_json(silent=True) or {}


def _plain_callback(app):
    """A callback with one plain output and state it reads whatever its inputs (the
    sweep's CSV download): which callback comes first in the map depends on the pages."""
    from dashboard import ids

    key = f"{ids.WI_SW_DOWNLOAD}.data"
    return key, app.callback_map[key]


def test_forged_callback_requests_get_400_and_one_log_line(app, caplog):
    client = app.server.test_client()
    assert client.get("/_dash-layout").status_code == 200  # Dash fills callback_map here
    output, spec = _plain_callback(app)
    oid, prop = output.rsplit(".", 1)
    good = {"output": output, "outputs": {"id": oid, "property": prop},
            "inputs": [{**i, "value": None} for i in spec["inputs"]],
            "state": [{**s, "value": None} for s in spec["state"]],
            "changedPropIds": []}
    forged = [
        [1, 2],
        "x",
        {},
        {**good, "output": "nope.children"},
        {**good, "inputs": [*good["inputs"][:-1], {"id": "other", "property": "value"}]},
        {**good, "state": []},
        {**good, "state": "everything"},
        {**good, "changedPropIds": [5]},
        {**good, "outputs": 5},
        {**good, "state": [{**s, "value": "wrong type"} for s in good["state"]]},
    ]
    for body in forged:
        caplog.clear()
        with caplog.at_level("WARNING", logger="railyard.dashboard"):
            status, answer = _update(client, body)
        assert status == 400, body
        assert answer["error"] and "\n" not in answer["error"]
        lines = [r for r in caplog.records if r.name == "railyard.dashboard"]
        assert len(lines) == 1 and lines[0].exc_info is None
        assert "\n" not in lines[0].getMessage()
    # the wrong-typed state failed inside a page: the line says where, so a genuine bug
    # answered as a forged request is found from the log alone
    assert re.search(r"raised at pages/\w+\.py:\d+\)$", lines[0].getMessage()), \
        lines[0].getMessage()


def test_live_limit_figures_are_drawn_once_per_assignment_read(app, monkeypatch):
    """A range change or refresh while the assignment is unchanged redraws nothing (on a
    200k-partition cluster each draw is a plotly build of 100 bars)."""
    from backend.services import limits

    overview = served_page("/")

    draws = []
    real = limits.guard_rails
    monkeypatch.setattr(limits, "guard_rails", lambda s: draws.append(1) or real(s))
    monkeypatch.setattr(overview, "_live", {})
    first = overview.assignment_view("a", timerange.window("1h", None, None, 1_700_000_000))
    again = overview.assignment_view("a", timerange.window("24h", None, None, 1_700_000_100))
    assert again is first and len(draws) == 1
    assert first[1]["data"][0]["type"] == "bar"


def test_broker_charts_are_drawn_beside_the_grid_not_after_it(app):
    """At 200k partitions a range change waited for the grid's answer (80 ms) before the
    broker charts' request began: the charts read the brokers themselves, not the grid's
    rows, and still show the selected broker, or the fullest one."""
    app.server.test_client().get("/_dash-layout")  # Dash fills callback_map here
    key = next(k for k in app.callback_map if f"{ids.BR_BYTES}.figure" in k)
    inputs = {f"{i['id']}.{i['property']}" for i in app.callback_map[key]["inputs"]}
    assert f"{ids.BR_GRID}.rowData" not in inputs and f"{ids.VIEW}.data" in inputs
    brokers = served_page("/brokers")
    snap = demo_snapshot()
    racks = dict(zip(snap.broker_ids.tolist(), snap.broker_racks, strict=True))
    counts = snap.broker_replica_counts()
    fullest = int(snap.broker_ids[counts.argmax()])
    state = {"cluster": "a", "range": "1h"}
    assert brokers.show_broker([], state, 0)[0] == (
        f"Broker {fullest} (rack {racks[fullest]}): the fullest broker; select a row to see "
        "another")
    other = next(b for b in racks if b != fullest)
    for selected in ({"ids": [str(other)]}, [{"broker": str(other)}]):  # URL, then the grid
        assert brokers.show_broker(selected, state, 0)[0] == f"Broker {other} (rack " \
                                                             f"{racks[other]})"
    gone = {"ids": ["999"]}  # a shared link to a broker the cluster no longer has
    assert "the fullest broker" in brokers.show_broker(gone, state, 0)[0]
