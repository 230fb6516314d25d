"""The one callback skeleton of the monitoring pages (Overview's health, Throttles, Quotas):
the window the view asks for, the drawn answer kept per window (dashboard.caches.drawn),
a banner linking to the cluster's data when it ends before the window does, and a service
that cannot answer turned into empty figures that say why. A page gives only its question
and how to draw the answer."""

from __future__ import annotations

from collections.abc import Callable

from backend.errors import Unavailable
from backend.services import monitoring
from components import banners, charts, monitor
from components.timerange import Window
from dashboard import caches, ids, runtime

Ask = Callable[[object, Window], dict]  # (ClusterSource, window) -> the service's answer
Draw = Callable[[dict, monitor.View], tuple]  # (answer, view) -> (cards, figure, ...)


def monitored(page: str, path: str, state: dict, ask: Ask, draw: Draw,
              figure_titles: tuple[str, ...]) -> tuple:
    """(cards, *figures, banners) for the view ``state`` asks for: ``draw``'s cards and
    figures, or, when ``ask`` is Unavailable, no cards and one empty figure per title."""
    w, notes = monitor.window(state)

    def build() -> tuple:
        source = runtime.current().source(state["cluster"])
        view = monitor.View(state["cluster"], w, source, notes=list(notes),
                            data_end=monitoring.data_ends_before(source, w))
        view.notes += monitor.data_elsewhere(view.data_end, w.start, view.cluster, path,
                                             ids.JUMP_TO_DATA)
        try:
            answer = ask(source, w)
        except Unavailable as e:
            return ([], *[charts.empty(title, str(e)) for title in figure_titles],
                    [banners.banner(str(e), "warning"), *view.notes])
        return (*draw(answer, view), view.notes)

    return caches.drawn(page, state, w, build)
