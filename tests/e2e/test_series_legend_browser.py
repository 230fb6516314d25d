"""A chart of a line per broker, drawn by the dashboard's plotly.js at a half-width
panel's size: at 100 brokers its plot is as tall as at 3, its legend a box under the time
ticks that scrolls, none of it over the ticks' labels (plotly's own legend took half the
figure, the plot kept 84 of 320 px, and the legend's rows sat on the ticks)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from components import charts
from components.reports import PLOTLY_JS
from tests.e2e.conftest import overlap

pytestmark = pytest.mark.e2e

PANEL_PX = 470  # a half-width panel's chart at a 1,024 px window
DRAWN = """
const g = document.getElementById('chart');
const box = e => { const r = e.getBoundingClientRect();
                   return [r.left, r.top, r.right, r.bottom]; };
return {plot: g._fullLayout._size.h,
        legend: box(g.querySelector('.legend .bg')),
        scrollbar: g.querySelector('.legend .scrollbar') ?
                   box(g.querySelector('.legend .scrollbar')) : null,
        ticks: Array.from(g.querySelectorAll('.xtick text, .xaxislayer-above text'))
                    .map(box).filter(b => b[2] > b[0]),
        svg: box(g.querySelector('.main-svg'))};
"""


def lines(n: int) -> dict:
    """The chart of ``n`` brokers' lines over 15 minutes, broker b at b - 1 bytes/s."""
    frame = pd.DataFrame({
        "time": pd.to_datetime([1_796_000_000 + 60 * k for _ in range(n) for k in range(15)],
                               unit="s"),
        "value": [float(b) for b in range(n) for _ in range(15)],
        "series": [str(b + 1) for b in range(n) for _ in range(15)]})
    return charts.time_series(frame, "Reassignment bytes in per broker", "bytes/s")


def drawn(browser, tmp_path, figure: dict, name: str) -> dict:
    """``figure`` drawn alone in a panel's width, and where its parts landed (DRAWN)."""
    page = tmp_path / f"{name}.html"
    page.write_text(
        f"<html><head><script>{PLOTLY_JS.read_text()}</script></head><body>"
        f"<div id='chart' style='width:{PANEL_PX}px'></div><script>"
        f"const f = {json.dumps(figure)};"
        "Plotly.newPlot('chart', f.data, f.layout, {displayModeBar: false});"
        "</script></body></html>")
    browser.get(page.as_uri())
    return browser.execute_script(DRAWN)


def test_100_brokers_keep_the_plot_of_3_and_a_scrolling_legend_off_the_ticks(browser,
                                                                            tmp_path):
    few = drawn(browser, tmp_path, lines(3), "three")
    many = drawn(browser, tmp_path, lines(100), "hundred")
    assert many["plot"] == pytest.approx(few["plot"], abs=1)
    legend = many["legend"]
    assert legend[3] - legend[1] <= charts.SCROLLED_LEGEND_PX + 1
    assert many["scrollbar"] and many["scrollbar"][3] > many["scrollbar"][1]  # it scrolls
    assert legend[2] <= many["svg"][2] + 1  # not cut off at the chart's right edge
    assert many["ticks"] and not [t for t in many["ticks"] if overlap(t, legend)]
    assert not [t for t in few["ticks"] if overlap(t, few["legend"])]
    assert few["scrollbar"] is None or few["scrollbar"][3] <= few["scrollbar"][1]


def test_a_line_of_100_is_named_on_hover_and_shown_alone_on_a_double_click(browser,
                                                                           tmp_path):
    """What the legend's title says works: hovering a line names its broker, and a
    double-click on a name leaves that broker's line alone on the chart."""
    drawn(browser, tmp_path, lines(100), "hundred")
    plot = browser.find_element(By.CSS_SELECTOR, "#chart .nsewdrag")
    ActionChains(browser).move_to_element(plot).perform()
    hover = WebDriverWait(browser, 10).until(lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll('#chart .hoverlayer text'))"
        ".map(e => e.textContent)"))
    assert set(hover) & {str(b) for b in range(1, 101)}, hover
    name = next(e for e in browser.find_elements(By.CSS_SELECTOR, "#chart .legend .traces")
                if e.text == "7")
    ActionChains(browser).double_click(name.find_element(By.CSS_SELECTOR, ".legendtoggle")
                                       ).perform()
    WebDriverWait(browser, 10).until(lambda d: d.execute_script(
        "return document.getElementById('chart').data"
        ".filter(t => t.visible !== 'legendonly').map(t => t.name)") == ["7"])
