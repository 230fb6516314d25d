"""/capacity in a browser: the time-to-limit grid's figures are the exports' (the grid
formatted "now (trend)" itself, 12,112.3 where the CSV said 12112 and the PDF 12,112),
and the PDF keeps each date on one line (2024-06-14 broke at its hyphens). The history
grows by fractions of a replica a day, so the trend's level is not a whole number."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import numpy as np
import pytest
from selenium.webdriver.common.by import By

from components import capacity as cap
from tests.e2e.conftest import console_errors, start_dashboard, stop, wait, wait_download
from tests.e2e.test_capacity_browser import VIEW, answer_text
from tests.servers import history_prometheus

pytestmark = pytest.mark.e2e
EPOCH = 1_704_067_200  # 2024-01-01T00:00:00Z; VIEW's end is day 29's 23:00
DAYS = 30
# replicas a day, whole counts each day: the trend's level is fractional (broker 1's
# 598.2 replicas, the cluster's 1,462.7) and so is the cluster's growth (19.45 a day)
GROWTH = {"1": 10.3, "2": 6.7, "3": 2.45}
FIGURES = ("limit", "now", "growth_per_day", "days")


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """A dashboard whose cluster's Prometheus holds 30 days of uneven partition counts."""
    home = tmp_path_factory.mktemp("capacity-figures")
    days = np.arange(DAYS)
    name = "kafka_server_replicamanager_partitioncount"
    lines = [f"# TYPE {name} gauge"]
    for b, growth in GROWTH.items():
        values = 300 + np.floor(growth * days)
        lines += [f'{name}{{broker="{b}"}} {v:.0f} {EPOCH + d * 86_400}'
                  for d, v in zip(days, values, strict=True)]
    (home / "history.om").write_text("\n".join([*lines, "# EOF", ""]))
    with history_prometheus(home / "history.om") as prom:
        d = start_dashboard(home, {"clusters": [{
            "name": "history", "gateway": {"type": "twin", "url": "http://127.0.0.1:9"},
            "prometheus": {"url": prom.url},
            "limits": {"max.broker.partitions": 1200, "max.partitions": 5000}}],
            "spark": {"master": "local[1]"}})
        try:
            yield d
        finally:
            stop(d.proc)


def grid_rows(driver) -> list[dict[str, str]]:
    """The grid's rows as it draws them: each cell's text by column, in row order."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#cap-table .ag-center-cols-container .ag-row")
    rows.sort(key=lambda r: int(r.get_attribute("row-index")))
    return [{c: r.find_element(By.CSS_SELECTOR, f"[col-id={c}]").text
             for c in ("scope", *FIGURES, "date")} for r in rows]


def test_the_grid_the_csv_and_the_pdf_say_the_same_figures(browser, dashboard, downloads):
    browser.get(dashboard.url + VIEW)
    wait(browser, 60).until(lambda d: answer_text(d).startswith("By "))
    shown = grid_rows(browser)
    assert len(shown) == len(GROWTH) + 2, shown  # each broker, the cluster, spread evenly
    browser.find_element(By.ID, "cap-export-csv").click()
    text = wait_download(downloads, ".csv", timeout=60).read_text()
    table = text[text.index("# time to limit\n") + len("# time to limit\n"):]
    exported = {r["scope"]: r for r in csv.DictReader(io.StringIO(table))}
    for row in shown:
        for field in FIGURES:
            said = (row[field], exported[row["scope"]][cap.TABLE_COLUMNS[field]])
            assert float(said[0].replace(",", "")) == float(said[1]), (row["scope"], field,
                                                                       said)
    assert all(re.fullmatch(r"[\d,]+", r["now"]) for r in shown), shown  # whole replicas
    assert console_errors(browser) == []
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    browser.find_element(By.ID, "cap-export-pdf").click()
    pdf = wait_download(downloads, ".pdf", timeout=120)
    printed = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                             check=True).stdout.decode()
    lines = [line.split() for line in printed.splitlines()]
    for row in shown:
        want = [row[f] for f in FIGURES] + [row["date"]]
        assert any(want == words[i:i + len(want)] for words in lines
                   for i in range(len(words))), (want, printed[:3000])
