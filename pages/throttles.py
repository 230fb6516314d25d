"""/throttles: KIP-73 replication throttles live. Its charts need the metrics
client and monitoring service (issue 5); until they exist the page says what is missing."""

from __future__ import annotations

import dash
from dash import Input, Output, html

from components import banners, monitor
from dashboard import ids

dash.register_page(__name__, path="/throttles", name="Throttles", title="Railyard · Throttles",
                   order=2)


def layout(**query) -> html.Div:
    return monitor.frame("Throttles", ids.TH_STATE, ids.TH_BANNERS, query, [
        html.P("Leader and follower throttled byte rates against the configured rates, "
               "replica lag and reassignment progress come from Prometheus.",
               className="explain"),
    ])


@dash.callback(Output(ids.TH_BANNERS, "children"), Input(ids.TH_STATE, "data"),
               Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    return [*monitor.source_banners(state),
            banners.banner("Live charts for this page need the metrics client and monitoring "
                           "service, which this build does not have yet.", "info")]
