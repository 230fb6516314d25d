"""/throttles: KIP-73 replication throttles live or over any window: throttled leader and
follower rates against the configured rates, replica lag, reassignment bytes, and the ETA
from observed progress beside the throttle engine's prediction."""

from __future__ import annotations

import dash
from dash import Input, Output, dcc, html

from backend.errors import Unavailable
from backend.services import monitoring
from components import banners, charts, monitor
from components.help import term
from components.tables import card, duration
from dashboard import caches, ids, plan_views, runtime, shell

dash.register_page(__name__, path="/throttles", name="Throttles", title="Railyard · Throttles",
                   order=2)

GRAPH = {"displayModeBar": False}


def layout(**query) -> html.Div:
    return shell.page_frame("Throttles", ids.TH_BANNERS, query, [
        html.Div(id=ids.TH_ETA, className="cards"),
        html.Div(dcc.Graph(id=ids.TH_RATES, config=GRAPH), className="panel"),
        html.Div(dcc.Graph(id=ids.TH_RATES_SERIES, config=GRAPH), className="panel"),
        html.Div([html.Div(dcc.Graph(id=ids.TH_LAG, config=GRAPH), className="panel"),
                  html.Div(dcc.Graph(id=ids.TH_REASSIGN_BYTES, config=GRAPH),
                           className="panel")], className="grid-2"),
    ])


@dash.callback(Output(ids.TH_ETA, "children"), Output(ids.TH_RATES, "figure"),
               Output(ids.TH_RATES_SERIES, "figure"), Output(ids.TH_LAG, "figure"),
               Output(ids.TH_REASSIGN_BYTES, "figure"), Output(ids.TH_BANNERS, "children"),
               Input(ids.VIEW, "data"), Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    w, notes = monitor.window(state)
    return caches.drawn("throttles", state, w, lambda: _draw(state, w, notes))


def _draw(state, w, notes):
    source = runtime.current().source(state["cluster"])
    notes = [*notes, *monitor.data_elsewhere(monitoring.data_ends_before(source, w),
                                             state["cluster"], "/throttles", ids.JUMP_TO_DATA)]
    try:
        t = monitoring.throttles(source, w)
    except Unavailable as e:
        empty = charts.empty("Replication throttles", str(e))
        return [], empty, empty, empty, empty, [banners.banner(str(e), "warning"), *notes]
    r = t["rates"]
    when = "now" if w.refreshing else f"at {w.label.split(' to ')[-1]}"
    if r["error"] and not r["brokers"]:
        rates = charts.empty("Throttled replication rates", r["error"])
    else:
        none = [None] * len(r["brokers"])
        configured = r["configured"] or {"leader": none, "follower": none}
        rates = charts.rate_vs_configured(
            r["brokers"], [v or 0 for v in r["leader"]], [v or 0 for v in r["follower"]],
            configured["leader"], configured["follower"],
            f"Throttled replication bytes/s per broker {when}, against the configured rates")
    if r["configured"] is None:
        notes.append(banners.banner(
            "Configured throttle rates come from the cluster's gateway and have no history: "
            "they are shown for live views of clusters Railyard reads live.", "info"))
    plans = plan_views.events_in(state["cluster"], w.start, w.end)
    return (_eta_cards(t["observed_eta"], t["predicted_eta"], w), rates,
            monitor.figure(t["rates_series"], "Throttled replication bytes/s", "bytes/s", w,
                           events=plans),
            monitor.figure(t["lag_series"], "Replica lag per broker (sum of fetcher lag)",
                           "messages", w, events=plans),
            monitor.figure(t["reassign_series"], "Reassignment bytes in per broker",
                           "bytes/s", w, events=plans),
            notes)


def _eta_cards(observed: dict, predicted: dict | None, w) -> list:
    if observed["error"]:
        seen = card(term("Observed ETA", "eta"), observed["why"], "ok", observed["error"])
    elif not observed["moving"]:
        seen = card(term("Observed ETA", "eta"), "nothing moving", "ok",
                    "no partition is being reassigned" + ("" if w.refreshing
                                                          else " at the end of the window"))
    else:
        never = observed["eta_seconds"] is None
        seen = card(term("Observed ETA", "eta"),
                    "stalled" if never else duration(observed["eta_seconds"]),
                    "over" if never else "ok",
                    f"{observed['remaining_bytes'] / 1e6:,.1f} MB left at "
                    f"{observed['rate'] / 1e6:,.2f} MB/s observed (replicas below their "
                    f"partition's largest log, {observed['basis']})")
    moving = observed["moving"]
    cards = [seen, card("Reassigning", observed["moving_why"] if moving is None
                        else f"{moving:,} partitions", "near" if moving else "ok",
                        observed["error"] if moving is None
                        else "ReassigningPartitions, summed over brokers")]
    if predicted is None:
        cards.append(card(term("Predicted ETA", "eta"), "-", "ok",
                          "needs the live cluster (gateway) and a live window"))
    elif predicted["eta_seconds"] is None and predicted["moving"]:
        cards.append(card(term("Predicted ETA", "eta"), "never" if predicted.get("throttle")
                          else "-", "over" if predicted.get("throttle") else "ok",
                          predicted.get("diagnosis") or predicted["note"]))
    elif predicted["moving"]:
        cards.append(card(term("Predicted ETA", "eta"), duration(predicted["eta_seconds"]),
                          "ok", f"throttle engine: {predicted['moving']} moves at "
                                f"{predicted['throttle'] / 1e6:,.2f} MB/s, from their start"))
    else:
        cards.append(card(term("Predicted ETA", "eta"), "-", "ok", predicted["note"]))
    return cards
