"""Report downloads: /reports/capacity.(html|pdf|csv) with the /capacity page's query, and
/reports/incident.(html|pdf|csv) with a monitoring page's window (cluster, range, from, to).

Routes on the dashboard's Flask server, behind its sign-in like every page (dashboard.auth
gates every route that is not public). Bad query = 400 with one line; a source that does
not answer = 503 with one line."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import flask
import pandas as pd

from backend.errors import BadInput, Unavailable
from backend.services import capacity, capacity_view, incident, printing
from components import capacity as cap
from components import charts, reports, timerange
from dashboard import runtime

# Flask adds "; charset=utf-8" to text types itself (naming it here doubled it)
FORMATS = {"html": "text/html", "pdf": "application/pdf", "csv": "text/csv"}


def install(server: flask.Flask) -> None:
    server.add_url_rule("/reports/capacity.<fmt>", "capacity_report", _capacity)
    server.add_url_rule("/reports/incident.<fmt>", "incident_report", _incident)


def _send(fmt: str, build) -> flask.Response:
    """``build()`` gives the file's name (what the report covers, not when it was made)
    and (html, csv) makers; the format asked picks one (PDF: the HTML printed)."""
    if fmt not in FORMATS:
        flask.abort(404)
    try:
        name, html, csv = build()
        body = csv() if fmt == "csv" else html()
        if fmt == "pdf":
            body = printing.html_to_pdf(body)
    except BadInput as e:
        return flask.Response(f"{e}\n", 400, mimetype="text/plain")
    except Unavailable as e:
        return flask.Response(f"{e}\n", 503, mimetype="text/plain")
    response = flask.Response(body, mimetype=FORMATS[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


# ---- capacity --------------------------------------------------------------------------------
def capacity_answer(view: dict) -> tuple[dict, str]:
    """The forecast a checked capacity view asks for, and its plan date's label."""
    return capacity_view.forecast(runtime.current().source(view["cluster"]), view)


def _known_cluster(name: str | None) -> None:
    """A report of a cluster the config does not have is refused (config.cluster would
    answer the first cluster's, under a file name that says so, as if asked for)."""
    note = runtime.current().unknown_cluster(name)
    if note is not None:
        raise BadInput(note)


def _capacity(fmt: str) -> flask.Response:
    def build():
        _known_cluster(flask.request.args.get("cluster"))
        answer, label = capacity_answer(capacity_view.parse_view(flask.request.args.to_dict()))
        return (f"capacity-{answer['cluster']}-{_day(answer['history']['end'])}",
                *capacity_documents(answer, label))
    return _send(fmt, build)


# how the capacity table reads (components.reports.FORMATS kinds), by header: as the
# page reads it (components.capacity.FIGURES)
CAPACITY_COLUMNS = cap.REPORT_KINDS


def capacity_documents(answer: dict, label: str):
    """(html, csv) makers of a capacity forecast's report."""
    meta = capacity_meta(answer)
    frame = capacity.table_frame(answer)
    table = cap.report_table(frame)
    verdict = cap.brokers_to_add_text(answer, label, cap.table_records(frame))
    heading = cap.answer_heading(answer)  # max.partitions when the line leads with it
    return (lambda: reports.html_document(
                f"Capacity review: {answer['cluster']}", meta,
                [("Time to each limit, most urgent first",
                  reports.readable(table, CAPACITY_COLUMNS)),
                 (heading, verdict),
                 reports.figure_section(cap.cluster_chart(answer)),
                 reports.figure_section(cap.broker_chart(answer))]),
            lambda: reports.csv_document(  # the answer line too: the page's first words
                {**meta, heading: verdict},
                {"time to limit": reports.plain(table, CAPACITY_COLUMNS)}))


def capacity_meta(answer: dict) -> dict[str, str]:
    s = answer["scenario"]
    knobs = [f"growth +{s['growth_pct_month']:g}%/month" if s["growth_pct_month"] else "",
             f"{charts.counted(s['add_brokers'], 'broker')} added" if s["add_brokers"] else "",
             f"max.broker.partitions raised to {s['max_broker_partitions']}"
             if s["max_broker_partitions"] is not None else "",
             f"max.partitions raised to {s['max_partitions']}"
             if s["max_partitions"] is not None else "",
             f"planned topic {s['topic_partitions']} x {s['topic_rf']}"
             if s["topic_partitions"] else ""]
    return {"Cluster": answer["cluster"],
            "Window": f"last {answer['window_days']} days to "
                      f"{_utc(answer['history']['end'])} UTC",
            "Scenario": ", ".join(k for k in knobs if k) or "as things are",
            "Made": answer["made_at"], "Data": answer["data"]}


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def _stamp(t: float) -> str:
    """A time in a file name (no ':', which some file systems refuse)."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y%m%dT%H%MZ")


# ---- incident --------------------------------------------------------------------------------
def _incident(fmt: str) -> flask.Response:
    def build():
        args = flask.request.args
        _known_cluster(args.get("cluster"))
        w = timerange.viewable(args.get("range"), args.get("from"), args.get("to"), time.time())
        rt = runtime.current()
        answer = incident.report(rt.source(args.get("cluster")), w.start, w.end,
                                 store=plan_store())
        return (f"incident-{answer['cluster']}-{_stamp(w.start)}-{_stamp(w.end)}",
                *incident_documents(answer, w))
    return _send(fmt, build)


# how the incident tables read (components.reports.FORMATS kinds)
INCIDENT_COLUMNS = {
    "minutes": "decimal", "peak under-replicated": "count", "peak under min ISR": "count",
    "under-replicated at the end": "count",
    "peak replicas": "count", "max.broker.partitions": "count", "peak % of limit": "percent",
    "peak reassigning": "count", "peak throttled sent (B/s)": "rate",
    "peak throttled fetched (B/s)": "rate", "peak lag (messages)": "count",
    "max throttle time (ms)": "ms", "fewest tokens": "count", "throttled": "flag"}
HEALTH_SERIES = ("under_replicated", "under_min_isr")  # charted under partition health


def incident_documents(answer: dict, w: timerange.Window):
    """(html, csv) makers of an incident window's report: partition health first (when
    partitions were under-replicated), then brokers, principals, what the two throttled
    rates measure, plan events, and the charts."""
    meta = {"Cluster": answer["cluster"],
            "Window": w.label if w.key == "abs" else
            f"{w.label}: {_utc(w.start)} to {_utc(w.end)} UTC",
            "Made": answer["made_at"], "Data": answer["data"]}
    events = answer["plan_events"]
    named = {"partition health": answer["health"], "brokers": answer["brokers"],
             "principals": answer["principals"]}
    tables = {k: reports.plain(v, INCIDENT_COLUMNS) for k, v in named.items()}
    if isinstance(events, pd.DataFrame):
        tables["plan events"] = events
    figures = incident_figures(answer, w)
    shown = {k: reports.readable(v, INCIDENT_COLUMNS) for k, v in named.items()}
    note = throttle_note(answer["throttled"])
    sections = [("Partition health: when partitions were under-replicated",
                 shown["partition health"]), *(figures.pop(k) for k in HEALTH_SERIES),
                ("Brokers in the window", shown["brokers"]),
                ("Principals and the controller mutation quota", shown["principals"]),
                ("Throttled replication: sent and fetched (KIP-73)", note),
                ("Plan events", events), *figures.values()]
    return (lambda: reports.html_document(f"Incident review: {answer['cluster']}", meta,
                                          sections),
            lambda: reports.csv_document({**meta, "Throttles": note}, tables))


def throttle_note(peaks: dict[str, float | None]) -> str:
    """What the two KIP-73 byte-rates measure (services.incident.throttled_peaks), and
    what it means when leaders sent far more than the moving replicas fetched (only when
    partitions were being reassigned: on the Kafka demo, meters fading after a finished
    move read as a move that could not finish)."""
    sent, fetched = peaks["sent"], peaks["fetched"]
    if not sent and not fetched:
        return "No throttled replication in this window."
    def rate(v: float | None) -> str:
        return "no data" if v is None else charts.rate_text(v)
    note = (f"Cluster peaks: sent {rate(sent)}, fetched {rate(fetched)}. Throttled sent "
            "counts every byte leaders send for the partitions in "
            "leader.replication.throttled.replicas, in-sync followers' keep-up traffic "
            "included (KIP-73, KAFKA-4313); throttled fetched counts only what the moving "
            "replicas, listed in follower.replication.throttled.replicas, fetch.")
    if peaks.get("reassigning") == 0 and not fetched:  # the leader side's floor
        note += (" No partition was being reassigned in this window and no throttled "
                 "follower fetched: the sent figure is Kafka's floor, not throttled data "
                 "(leaders count every "
                 "follower fetch's response overhead on that side, throttled partitions or "
                 "not: KafkaApis's sizeOfThrottledPartitions).")
    elif peaks.get("reassigning") == 0:  # a meter fading after a move (or a leftover
        # throttle on idle partitions): no move to have starved
        note += (" No partition was being reassigned in this window: these rates are "
                 "Kafka's meters (about a minute's average) fading after a move, or traffic "
                 "of partitions still listed in the throttled replicas.")
    elif sent and sent > 2 * (fetched or 0):
        note += (" Here sent is far above fetched: keep-up traffic used the leaders' "
                 "throttle, so the moving replicas got little or nothing, their lag grew and "
                 "the move could not finish (KIP-73: the throttle must be above the moving "
                 "partitions' write rate).")
    return note


def incident_figures(answer: dict, w: timerange.Window) -> dict[str, tuple[str, dict]]:
    """Each series' (title, chart), in services.incident.SERIES order."""
    limit = answer["limits"]["max.broker.partitions"]
    out = {}
    for key, (_, title, unit) in incident.SERIES.items():
        frame = answer["series"][key]
        if isinstance(frame, str):
            out[key] = (title, charts.empty(title, frame.split(" (", 1)[0]))
            continue
        label = "broker" if key not in ("mutation_throttle", "mutation_tokens") else None
        rows = _rows(frame, answer["by"] if label else None)
        x_range = (_utc(w.start), _utc(w.end))
        out[key] = (title, charts.time_series(
            rows, title, unit, limit=limit if key == "partitions" else None,
            limit_name="max.broker.partitions", x_range=x_range))
    return out


def _rows(frame: pd.DataFrame, by: str | None) -> pd.DataFrame:
    """Chart rows (time, value, series): one series per broker, or per principal."""
    if by is None:
        names = frame["user"].astype(str) + "/" + frame["client_id"].astype(str)
    else:
        names = frame[by].astype(str)
    return pd.DataFrame({"time": frame["timestamp"].dt.tz_convert(None),
                         "value": frame["value"], "series": names})


def plan_store():
    """The dashboard's plan store, or None when it does not open (the report then says
    plan events are missing instead of failing)."""
    try:
        return runtime.current().plan_store()
    except Unavailable:
        return None
