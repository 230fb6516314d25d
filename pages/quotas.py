"""/quotas: KIP-599 controller mutation quotas live or over any window: tokens per
principal against its burst, mutation rate, throttle time, who is throttled."""

from __future__ import annotations

import dash
from dash import Input, Output, dcc, html

from backend.services import monitoring
from components import banners, charts, monitor
from components.help import term
from components.tables import card
from dashboard import ids, shell
from dashboard.monitoring_view import monitored

dash.register_page(__name__, path="/quotas", name="Quotas", title="Railyard · Quotas",
                   order=3)

GRAPH = {"displayModeBar": False}


def layout(**query) -> html.Div:
    return shell.page_frame("Quotas", ids.QU_BANNERS, query, [
        html.Div(id=ids.QU_THROTTLED_NOW, className="cards"),
        html.Div([html.Div(dcc.Graph(id=ids.QU_TOKENS, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.QU_TOKENS_SERIES, config=GRAPH),
                           className="panel")], className="grid-2"),
        html.Div([html.Div(dcc.Graph(id=ids.QU_RATE, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.QU_THROTTLE, config=GRAPH), className="panel")],
                 className="grid-2"),
    ])


@dash.callback(Output(ids.QU_THROTTLED_NOW, "children"), Output(ids.QU_TOKENS, "figure"),
               Output(ids.QU_TOKENS_SERIES, "figure"), Output(ids.QU_RATE, "figure"),
               Output(ids.QU_THROTTLE, "figure"), Output(ids.QU_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    return monitored("quotas", "/quotas", state, monitoring.quotas, _draw,
                     ("Tokens per principal", "Tokens per principal over time",
                      "Partition mutation rate", "Throttle time"))


def _draw(q: dict, view: monitor.View) -> tuple:
    w = view.window
    if q["quotas_set"] == 0:  # Kafka meters nothing then: say so, not "no data yet"
        view.notes.append(banners.banner(
            "No controller_mutation_rate quota is set on this cluster (KIP-599): Kafka "
            "meters partition mutations only for principals a quota applies to, so these "
            "charts stay empty until one is set, e.g. kafka-configs --alter --entity-type "
            "users --entity-default --add-config controller_mutation_rate=10.", "info"))
    if q["now"]:
        rows = q["now"]
        tokens = charts.tokens_vs_burst([r["principal"] for r in rows],
                                        [r["tokens"] for r in rows],
                                        [r["burst"] for r in rows],
                                        f"Tokens per principal {view.when}, against its burst")
        if any(r["burst"] is None for r in rows):
            view.notes.append(banners.banner(
                "The burst of some principals is unknown: their quota comes from the "
                "cluster's gateway (or quota.controller_mutation_rate in the config).", "info"))
    else:
        tokens = charts.empty("Tokens per principal",
                              view.missing(q["now_error"], at_end=True) if q["now_error"]
                              else "No principal has a quota")
    throttled = q["throttled"]
    names = throttled["detail"]
    unmetered = throttled["value"] is None and q["quotas_set"] == 0 and not view.before
    cards = [
        card(term("Throttled principals", "strict"), "no quota", "ok",
             "no controller_mutation_rate quota is set, so Kafka throttles no one")
        if unmetered else
        card(term("Throttled principals", "strict"),
             "-" if throttled["value"] is None else f"{throttled['value']:,.0f}",
             "over" if names else "ok",
             view.note(throttled) or (
                 f"throttled in {w.label}: " + ", ".join(names) if names
                 else f"nobody was throttled in {w.label}")),
        card(term("Principals with a quota", "burst"), f"{len(q['now'])}", "ok",
             ", ".join(r["principal"] for r in q["now"]) or None),
    ]
    # each point is the step's extreme: a throttle lasts seconds, shorter than a step
    each = f"in each {w.step_label}"
    return (cards, tokens,
            view.figure(q["tokens_series"], f"Tokens per principal, the fewest {each}",
                        "tokens"),
            view.figure(q["rate_series"], "Partition mutation rate", "partitions/s"),
            view.figure(q["throttle_series"], f"Throttle time, the longest {each}", "ms"))
