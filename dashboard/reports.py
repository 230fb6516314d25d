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
from backend.services import capacity, incident, printing
from components import capacity as cap
from components import charts, reports, timerange
from dashboard import runtime

FORMATS = {"html": "text/html; charset=utf-8", "pdf": "application/pdf",
           "csv": "text/csv; charset=utf-8"}


def install(server: flask.Flask) -> None:
    server.add_url_rule("/reports/capacity.<fmt>", "capacity_report", _capacity)
    server.add_url_rule("/reports/incident.<fmt>", "incident_report", _incident)


def _send(fmt: str, name: str, build) -> flask.Response:
    """``build()`` gives (html, csv) makers; the format asked picks one (PDF: the HTML
    printed)."""
    if fmt not in FORMATS:
        flask.abort(404)
    try:
        html, csv = build()
        body = csv() if fmt == "csv" else html()
        if fmt == "pdf":
            body = printing.html_to_pdf(body)
    except BadInput as e:
        return flask.Response(f"{e}\n", 400, mimetype="text/plain")
    except Unavailable as e:
        return flask.Response(f"{e}\n", 503, mimetype="text/plain")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%MZ")
    response = flask.Response(body, mimetype=FORMATS[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}-{stamp}.{fmt}"'
    return response


# ---- capacity --------------------------------------------------------------------------------
def capacity_answer(state: dict) -> tuple[dict, str]:
    """The forecast a capacity view asks for, and its plan date's label."""
    rt = runtime.current()
    source = rt.source(state["cluster"])
    end = cap.end_time(state)
    today = end if end is not None else time.time()
    days, label = cap.by_days(state, today)
    answer = capacity.forecast(source, state["window"], cap.scenario(state), days, end=end)
    return answer, label


def _capacity(fmt: str) -> flask.Response:
    def build():
        state = cap.parse_state(flask.request.args.to_dict())
        answer, label = capacity_answer(state)
        return capacity_documents(answer, label)
    return _send(fmt, "capacity", build)


def capacity_documents(answer: dict, label: str):
    """(html, csv) makers of a capacity forecast's report."""
    meta = capacity_meta(answer)
    table = capacity.table_frame(answer)[list(cap.TABLE_COLUMNS)].rename(
        columns=cap.TABLE_COLUMNS)
    return (lambda: reports.html_document(
                f"Capacity review: {answer['cluster']}", meta,
                [("Time to each limit, most urgent first", table),
                 ("Brokers to add", cap.brokers_to_add_text(answer, label)),
                 ("Cluster", cap.cluster_chart(answer)),
                 ("Brokers", cap.broker_chart(answer))]),
            lambda: reports.csv_document(meta, {"time to limit": table}))


def capacity_meta(answer: dict) -> dict[str, str]:
    s = answer["scenario"]
    knobs = [f"growth +{s['growth_pct_month']:g}%/month" if s["growth_pct_month"] else "",
             f"{s['add_brokers']} brokers added" if s["add_brokers"] else "",
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


# ---- incident --------------------------------------------------------------------------------
def _incident(fmt: str) -> flask.Response:
    def build():
        args = flask.request.args
        w = timerange.window(args.get("range"), args.get("from"), args.get("to"), time.time())
        rt = runtime.current()
        answer = incident.report(rt.source(args.get("cluster")), w.start, w.end,
                                 store=plan_store())
        return incident_documents(answer, w)
    return _send(fmt, "incident", build)


def incident_documents(answer: dict, w: timerange.Window):
    """(html, csv) makers of an incident window's report."""
    meta = {"Cluster": answer["cluster"],
            "Window": w.label if w.key == "abs" else
            f"{w.label}: {_utc(w.start)} to {_utc(w.end)} UTC",
            "Made": answer["made_at"], "Data": answer["data"]}
    events = answer["plan_events"]
    tables = {"brokers": answer["brokers"], "principals": answer["principals"]}
    if isinstance(events, pd.DataFrame):
        tables["plan events"] = events
    return (lambda: reports.html_document(
                f"Incident review: {answer['cluster']}", meta,
                [("Brokers in the window", answer["brokers"]),
                 ("Principals and the controller mutation quota", answer["principals"]),
                 ("Plan events", events), *incident_figures(answer, w)]),
            lambda: reports.csv_document(meta, tables))


def incident_figures(answer: dict, w: timerange.Window) -> list[tuple[str, dict]]:
    limit = answer["limits"]["max.broker.partitions"]
    out = []
    for key, (_, title, unit) in incident.SERIES.items():
        frame = answer["series"][key]
        if isinstance(frame, str):
            out.append((title, charts.empty(title, frame.split(" (", 1)[0])))
            continue
        label = "broker" if key not in ("mutation_throttle", "mutation_tokens") else None
        rows = _rows(frame, answer["by"] if label else None)
        x_range = (_utc(w.start), _utc(w.end))
        out.append((title, charts.time_series(
            rows, title, unit, limit=limit if key == "partitions" else None,
            limit_name="max.broker.partitions", x_range=x_range)))
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
