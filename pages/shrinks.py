"""/shrinks: preview shrinking a topic's partition count as the delete-partitions KIP
stages it (ReadOnly, then None after the delay, then removed), the room it reclaims on
each broker, its risks in words, and the copy-to-a-new-topic migration that works on any
Kafka cluster today; and what executing it does on this cluster (the stages, or the
migration where the cluster cannot delete partitions)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, dcc, html

from backend.errors import BadInput, Unavailable
from backend.services import drained, fields, plan_preview, shrink_execution
from backend.services.cluster import cluster_snapshot
from backend.services.plan_kinds import shrink as shrink_kind
from components import banners, tables, urlstate
from dashboard import auth, drafts, ids, plan_views, runtime
from dashboard.plan_views import kinds

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
        html.P(shrink_execution.what_happens(runtime.current().gateways.get(c.name)),
               id=ids.SH_ON_CLUSTER, className="explain"),
        html.Div([
            tables.field("Topic", dcc.Input(id=ids.SH_TOPIC, type="text", value=topic or "")),
            tables.field("Partitions after", tables.number_input(ids.SH_PARTITIONS)),
            tables.field("Delay (hours)", tables.number_input(ids.SH_DELAY,
                                                              placeholder="retention.ms"),
                   "time consumers get to read the removed partitions"),
            html.Button("Preview", id=ids.SH_RUN, className="button primary"),
        ], className="form-row"),
        html.Div(id=ids.SH_ERROR, className="inline-error", role="alert"),
        dcc.Loading(html.Div(id=ids.SH_PREVIEW), delay_show=300),
    ])


PAGE_FIELDS = ("partitions after", "delay (hours)")  # a refusal names this page's fields


@dash.callback(Output(ids.SH_PREVIEW, "children"), Output(ids.PLAN_TOKEN, "data"),
               Output(ids.SH_ERROR, "children"), Output(ids.SH_BANNERS, "children"),
               Input(ids.SH_RUN, "n_clicks"), State(ids.SH_TOPIC, "value"),
               State(ids.SH_PARTITIONS, "value"), State(ids.SH_DELAY, "value"),
               State(ids.URL, "search"), prevent_initial_call=True)
def preview(_clicks, topic, partitions, delay_hours, search):
    cluster = urlstate.parse(search).get("cluster")
    rt = runtime.current()
    try:
        snap = cluster_snapshot(rt.source(cluster))
        partitions = fields.number(partitions, "partitions after", low=1, whole=True,
                                   required="the number of partitions to keep")
        hours = fields.number(delay_hours, "delay", low=0, unit="hours", empty="retention.ms",
                              limit=plan_preview.MAX_DELAY_MS / 3.6e6)
        delay_ms = None if hours is None else round(hours * 3.6e6)
        draft = plan_preview.from_shrink(snap, (topic or "").strip(), partitions,
                                         delay_ms=delay_ms, fields=PAGE_FIELDS,
                                         drained=drained.remembered(rt.plan_store(), snap),
                                         deletes_partitions=shrink_kind.deletes_partitions(
                                             rt.gateways.get(rt.cluster(cluster).name)))
    except BadInput as e:  # the last preview goes, with its Propose: it was not this input's
        return None, None, str(e), []
    except Unavailable as e:
        return None, None, "", [banners.banner(str(e), "error")]
    head = [html.H2(draft.title, className="plan-title"),
            plan_views.propose_row(auth.current_actor(), draft.title, draft.kind)]
    return kinds.block(draft.kind, draft, head), drafts.save(draft), "", []
