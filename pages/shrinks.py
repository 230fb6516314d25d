"""/shrinks: preview shrinking a topic's partition count as the delete-partitions KIP
stages it (ReadOnly, then None after the delay, then removed), the room it reclaims on
each broker, its risks in words, and the copy-to-a-new-topic migration that works on any
Kafka cluster today."""

from __future__ import annotations

import dash
import pandas as pd
from dash import Input, Output, State, dcc, html, no_update

from backend.errors import BadInput, Unavailable
from backend.services import plan_preview
from backend.services.cluster import cluster_snapshot
from components import banners, plans, tables, urlstate
from components.tables import duration
from dashboard import drafts, ids, runtime

dash.register_page(__name__, path="/shrinks", name="Shrinks", title="Railyard · Shrinks",
                   order=6)


def layout(cluster: str | None = None, topic: str | None = None, **_query) -> html.Div:
    c = runtime.current().cluster(cluster)
    return html.Div([
        dcc.Store(id=ids.PLAN_TOKEN),
        html.H1(["Partition shrinks ", html.Small(f"cluster {c.name}")]),
        html.Div(id=ids.SH_BANNERS),
        html.P("Shrinking removes a topic's highest-numbered partitions: they go read-only "
               "at once, offline after the delay, and their data is deleted at the "
               "controller's next check. Leave the delay empty to use the topic's "
               "retention.ms.", className="explain"),
        html.Div([
            _field("Topic", dcc.Input(id=ids.SH_TOPIC, type="text", value=topic or "")),
            _field("Partitions after", dcc.Input(id=ids.SH_PARTITIONS, type="number", min=1)),
            _field("Delay (hours)", dcc.Input(id=ids.SH_DELAY, type="number", min=0,
                                              placeholder="retention.ms"),
                   "time consumers get to read the removed partitions"),
            html.Button("Preview", id=ids.SH_RUN, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.SH_ERROR, className="inline-error", role="alert"),
        dcc.Loading(html.Div(id=ids.SH_PREVIEW), delay_show=300),
    ])


def _field(label, control, hint: str | None = None) -> html.Label:
    return html.Label([html.Span(label, className="field-label"), control,
                       html.Small(hint, className="hint") if hint else None], className="field")


@dash.callback(Output(ids.SH_PREVIEW, "children"), Output(ids.PLAN_TOKEN, "data"),
               Output(ids.SH_ERROR, "children"), Output(ids.SH_BANNERS, "children"),
               Input(ids.SH_RUN, "n_clicks"), State(ids.SH_TOPIC, "value"),
               State(ids.SH_PARTITIONS, "value"), State(ids.SH_DELAY, "value"),
               State(ids.URL, "search"), prevent_initial_call=True)
def preview(_clicks, topic, partitions, delay_hours, search):
    cluster = urlstate.parse(search).get("cluster")
    try:
        snap = cluster_snapshot(runtime.current().source(cluster))
        if partitions in (None, ""):
            raise BadInput("partitions after: give the number of partitions to keep")
        if delay_hours not in (None, "") and float(delay_hours) < 0:
            raise BadInput("delay: give hours >= 0, or leave it empty for retention.ms")
        delay_ms = None if delay_hours in (None, "") else round(float(delay_hours) * 3.6e6)
        draft = plan_preview.from_shrink(snap, (topic or "").strip(), int(partitions),
                                         delay_ms=delay_ms)
    except BadInput as e:
        return no_update, no_update, str(e), []
    except Unavailable as e:
        return no_update, no_update, "", [banners.banner(str(e), "error")]
    return shrink_preview(draft), drafts.save(draft), "", []


def shrink_preview(draft: plan_preview.Draft) -> list:
    """The preview block of a shrink draft or stored shrink plan."""
    p, c = draft.preview, draft.content
    reclaimed = pd.DataFrame([{"broker": b["id"], "replicas before": b["before"],
                               "replicas after": b["after"],
                               "replicas reclaimed": b["replicas_reclaimed"],
                               "log bytes reclaimed": b["bytes_reclaimed"]}
                              for b in p["brokers"]])
    return [
        html.H2(draft.title, className="plan-title"),
        html.Div(plans.shrink_cards(p, c), id=ids.PLAN_CARDS, className="cards"),
        html.Div(plans.words(p), id=ids.PLAN_WORDS),
        html.Div([html.H3("Stages"), stages(c["stages"])], className="panel"),
        html.Div(plans.bars(p, "Replicas per broker before and after the shrink",
                            ids.PLAN_BARS),
                 className="panel"),
        html.Div([html.H3("Room reclaimed per broker"), tables.grid(reclaimed, height=260)],
                 className="panel"),
        migration(c["migration"]),
    ]


def stages(rows: list[dict]) -> html.Ol:
    return html.Ol([html.Li([html.Strong(s["mode"]), f" at {_when(s)}: {s['effect']}"])
                    for s in rows], className="stages")


def _when(stage: dict) -> str:
    at, latest = stage["at_ms"] / 1000, stage["latest_at_ms"] / 1000
    if at == 0 and latest == 0:
        return "once approved and started"
    if at == latest:
        return f"+{duration(at)}"
    return f"+{duration(at)} (at the latest +{duration(latest)})"


def migration(m: dict) -> html.Div:
    """The shrink any cluster can run today: a new topic, switch, drain, delete."""
    return html.Div([
        html.H3(f"The migration that works on any cluster today: to '{m['new_topic']}'"),
        banners.banner(m["error"], "error") if not m["ok"] else None,
        html.Ol([html.Li(step) for step in m["steps"]]),
        html.P(f"Peak partition replicas in the cluster while both topics exist: "
               f"{m['peak_cluster_partitions']:,}", className="hint"),
        tables.placement(m["assignment"]),
    ], className="panel")
