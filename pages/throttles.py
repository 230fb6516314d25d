"""/throttles: KIP-73 replication throttles live or over any window: throttled leader and
follower rates against the configured rates, replica lag, reassignment bytes, and the ETA
from observed progress beside the throttle engine's prediction."""

from __future__ import annotations

import dash
from dash import Input, Output, dcc, html

from backend.services import execution, monitoring
from components import banners, charts, monitor
from components.help import term
from components.tables import card, duration
from dashboard import ids, plan_views, runtime, shell
from dashboard.monitoring_view import monitored

dash.register_page(__name__, path="/throttles", name="Throttles", title="Railyard · Throttles",
                   order=2)

GRAPH = {"displayModeBar": False}
PROGRESS = duration(monitoring.PROGRESS_SECONDS)  # what the observed ETA's progress spans


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
    return monitored("throttles", "/throttles", state, monitoring.throttles, _draw,
                     ("Throttled replication rates", "Throttled replication bytes/s",
                      "Replica lag per broker", "Reassignment bytes in per broker"))


def _draw(t: dict, view: monitor.View) -> tuple:
    w = view.window
    r = t["rates"]
    if r["error"] and not r["brokers"]:
        rates = charts.empty("Throttled replication rates", view.missing(r["error"], at_end=True))
    else:
        none = [None] * len(r["brokers"])
        configured = r["configured"] or {"leader": none, "follower": none}
        rates = charts.rate_vs_configured(
            r["brokers"], [v or 0 for v in r["leader"]], [v or 0 for v in r["follower"]],
            configured["leader"], configured["follower"],
            f"Throttled replication bytes/s per broker {view.when}, against the configured "
            "rates", nothing=charts.NOTHING_THROTTLED if r["configured"] is None
            else NO_THROTTLE)
    if any(r["leader"]) and not any(r["follower"]):
        view.notes.append(banners.banner(
            "The leader side never reads 0 on Apache Kafka, throttle or not: leaders count "
            "every follower fetch's response overhead there (KafkaApis's "
            "sizeOfThrottledPartitions), tens of bytes a fetch. The follower side counts "
            "throttled bytes only, and reads none here: nothing is being throttled.", "info"))
    above = _above_throttle(r)
    if above:
        view.notes.append(banners.banner(
            f"{_brokers_read(above)} above the configured throttle. Kafka admits whole "
            "fetches while a broker's rate, measured over up to 11 s, is under the throttle "
            "(KIP-73; ReplicationQuotaManager's SimpleRate): a broker idle before a move may "
            "copy up to the rate x 11 s at once, and its rate then reads high for some "
            "seconds. The sustained rate still holds; docs/throttle.md measures it.", "info"))
    if r["configured"] is None:
        view.notes.append(banners.banner(
            "Configured throttle rates come from the cluster's gateway and have no history: "
            "they are shown for live views of clusters Railyard reads live.", "info"))
    plans = plan_views.events_in(view.cluster, w.start, w.end)
    cards = _eta_cards(t["observed_eta"], t["predicted_eta"], view)
    if w.refreshing:
        cards += [card(f"Plan #{e['plan_id']} ETA", duration(e["predicted_eta_seconds"]),
                       "ok", f"{e['state']}: as its page predicts, batch after batch at its "
                             "throttle")
                  for e in execution.executing_etas(runtime.current().plan_store(),
                                                    view.cluster)]
    return (cards, rates,
            view.figure(t["rates_series"], "Throttled replication bytes/s", "bytes/s",
                        events=plans),
            view.figure(t["lag_series"], "Replica lag per broker (sum of fetcher lag)",
                        "messages", events=plans),
            view.figure(t["reassign_series"], "Reassignment bytes in per broker", "bytes/s",
                        events=plans))


# the rates chart when the gateway says no broker has a rate configured, and none moves
# throttled bytes
NO_THROTTLE = "No broker has a throttle set or moves throttled bytes"
# above this share of its configured rate a broker's measured rate is not rounding
ABOVE = 1.1


def _above_throttle(r: dict) -> list[str]:
    """Brokers whose leader or follower throttled byte-rate reads over ABOVE x its
    configured rate: what the bars show over their line."""
    if not r["configured"]:
        return []
    sides = [(r[s], r["configured"][s]) for s in ("leader", "follower")]
    return [b for i, b in enumerate(r["brokers"])
            if any(seen[i] and rate[i] and seen[i] > ABOVE * rate[i] for seen, rate in sides)]


def _brokers_read(names: list[str]) -> str:
    one = len(names) == 1
    return f"{'Broker' if one else 'Brokers'} {', '.join(names)} {'reads' if one else 'read'}"


# why the rate charts still show throttled bytes once a move ended
FADING = ("throttled byte rates are averages over about a minute (Kafka's meters, "
          "Prometheus' rate window), so the charts show them fading for a while after the "
          "last move ends")


def _eta_cards(observed: dict, predicted: dict | None, view: monitor.View) -> list:
    w = view.window
    if observed["error"]:
        seen = card(term("Observed ETA", "eta"), observed["why"], "ok",
                    view.missing(observed["error"], at_end=True))
    elif not observed["moving"]:
        seen = card(term("Observed ETA", "eta"), "nothing moving", "ok",
                    "no partition is being reassigned" + (
                        f"; {FADING}" if w.refreshing else " at the end of the window"))
    elif not observed["remaining_bytes"]:
        seen = card(term("Observed ETA", "eta"), "none behind", "ok",
                    "no replica of a moving partition is measured behind yet: a new "
                    "replica's log size reaches Prometheus at its first scrape, and one "
                    "that caught up may still be joining the ISR")
    elif observed["measuring"]:
        seen = card(term("Observed ETA", "eta"), "measuring", "ok",
                    f"{observed['remaining_bytes'] / 1e6:,.1f} MB left; the ETA follows "
                    f"once these moves have run {PROGRESS}: it is how fast that shrinks")
    else:
        never = observed["eta_seconds"] is None
        if observed["bound"]:  # the copy rate carries new writes too
            pace = f"at {observed['rate'] / 1e6:,.2f} MB/s copied" + (
                "" if never else "; that rate carries new writes too, so it may take longer")
        elif never:
            pace = f"not shrinking over the last {PROGRESS}"
        else:
            pace = f"shrinking {observed['rate'] / 1e6:,.2f} MB/s over the last {PROGRESS}"
        seen = card(term("Observed ETA", "eta"),
                    "stalled" if never else duration(observed["eta_seconds"]),
                    "over" if never else "ok",
                    f"{observed['remaining_bytes'] / 1e6:,.1f} MB left, {pace} (replicas "
                    f"below their partition's largest log, "
                    f"{'every partition' if observed['bound'] else 'partitions in flight'})")
    moving = observed["moving"]
    cards = [seen, card("Reassigning", observed["moving_why"] if moving is None
                        else charts.counted(moving, "partition"), "near" if moving else "ok",
                        view.missing(observed["error"], at_end=True) if moving is None
                        else "ReassigningPartitions, summed over brokers")]
    if predicted is None:
        cards.append(card(term("Predicted ETA", "eta"), "-", "ok",
                          "needs the live cluster (gateway) and a live window"))
    elif predicted["eta_seconds"] is None and predicted["moving"]:
        cards.append(card(term("Predicted ETA", "eta"), "never" if predicted.get("throttle")
                          else "-", "over" if predicted.get("throttle") else "ok",
                          predicted.get("diagnosis") or predicted["note"]))
    elif predicted["moving"]:
        start = "from now, for the bytes their new replicas still lack" \
            if predicted.get("from_now") else "from their start at the logs' sizes now " \
            "(it grows while producers write), Prometheus giving no bytes behind"
        cards.append(card(term("Predicted ETA", "eta"), duration(predicted["eta_seconds"]),
                          "ok", f"throttle engine: {predicted['moving']} moves at "
                                f"{_slowest(predicted['throttle'])}, {start}, each broker at "
                                "its own configured rate less the writes it keeps up with "
                                "(a Railyard plan's ETA is its own card, as its page gives it)"))
    else:
        cards.append(card(term("Predicted ETA", "eta"), "-", "ok", predicted["note"]))
    return cards


def _slowest(rate: float | None) -> str:
    """The lowest configured rate among the brokers moving data, as the card says it."""
    return "network speed" if rate is None else f"{rate / 1e6:,.2f} MB/s (the slowest)"
