"""/quotas: KIP-599 mutation quotas live. Its charts need the metrics client and
monitoring service (issue 5); until they exist the page says what is missing."""

from __future__ import annotations

import dash
from dash import Input, Output, html

from components import banners, monitor
from dashboard import ids

dash.register_page(__name__, path="/quotas", name="Quotas", title="Railyard · Quotas",
                   order=3)


def layout(**query) -> html.Div:
    return monitor.frame("Quotas", ids.QU_STATE, ids.QU_BANNERS, query, [
        html.P("Tokens per principal against its burst, mutation rate, throttle time and who "
               "is throttled now come from Prometheus.",
               className="explain"),
    ])


@dash.callback(Output(ids.QU_BANNERS, "children"), Input(ids.QU_STATE, "data"),
               Input(ids.REFRESH, "n_intervals"))
def show(state, _tick):
    return [*monitor.source_banners(state),
            banners.banner("Live charts for this page need the metrics client and monitoring "
                           "service, which this build does not have yet.", "info")]
