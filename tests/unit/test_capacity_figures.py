"""Capacity's page, CSV and PDF say the same figures, and the PDF keeps each date on one
line (a new user's report). The page's grid formatted "now (trend)" itself (12,112.3)
where the exports wrote 12112 and 12,112, and growth a day 4.67 where they wrote 4.7: now
the page shows each figure as the reports' one formatting writes it
(components.capacity.FIGURES: the trend whole, like the limit it is read against). A
narrow column of the printed table broke 2024-06-14 at its hyphens, "2024-06-" over
"14": the reports' tables keep every date in a cell whole (components.reports
.unbroken_dates, span.date: nowrap)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from backend.errors import Unavailable
from backend.services import capacity, printing
from components import capacity as cap
from components.reports import unbroken_dates
from dashboard import ids, reports
from tests.unit.test_capacity_reports import answer
from tests.unit.test_plan_view import app, as_user, page  # noqa: F401 (a fixture)

LABEL = "2024-03-31"
VIEW = {"cluster": "demo", "end": None}
KNOBS = ("30", "", "", "", "", "", "")


def grid(component):
    """The capacity grid in the page's layout."""
    if getattr(component, "id", None) == ids.CAP_TABLE:
        return component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, list) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            found = grid(child)
            if found is not None:
                return found
    return None


def shown_on_the_page(app, monkeypatch) -> list[dict]:  # noqa: F811
    """What the page's grid shows of each row, by column (its rows as draw answers them,
    read through the columns' formatters as the grid does)."""
    monkeypatch.setattr(reports, "capacity_answer", lambda view: (answer(), LABEL))
    ctx = as_user(app, "olga")
    try:
        view = page("/capacity")
        columns = grid(view.layout(cluster="demo")).columnDefs
        rows = view.draw(*KNOBS, VIEW)[2]
    finally:
        ctx.pop()
    out = []
    for row in rows:
        cells = {}
        for c in columns:
            formatter = (c.get("valueFormatter") or {}).get("function")
            read = re.fullmatch(r"params\.data\.(\w+)\.(\w+)", formatter or "")
            # a figure: the text the row carries for it; else the value as it is, or as
            # assets/railyard.js's formatter writes it
            cells[c["field"]] = row[read[1]][read[2]] if read else \
                BROWSER[formatter](row[c["field"]]) if formatter else row[c["field"]]
        out.append(cells)
    return out


def thousands(v) -> str:
    """What assets/railyard.js's dagfuncs.thousands writes: up to two decimals."""
    return "-" if v is None or v != v else f"{v:,.2f}".rstrip("0").rstrip(".")


BROWSER = {"thousands(params.value)": thousands}  # the grid's own formatters, as Python


def csv_rows() -> list[dict]:
    lines = reports.capacity_documents(answer(), LABEL)[1]().splitlines()
    header = lines.index("# time to limit") + 1
    names = lines[header].split(",")
    return [dict(zip(names, line.split(","), strict=True)) for line in lines[header + 1:]]


def test_the_page_and_the_csv_say_the_same_figures(app, monkeypatch):  # noqa: F811
    page_rows, csv = shown_on_the_page(app, monkeypatch), csv_rows()
    assert [r["scope"] for r in page_rows] == [r["scope"] for r in csv]
    broker = next(r for r in page_rows if r["scope"] == "broker 1")
    # the trend's level 568.7 replicas: whole, as the limit it is read against
    assert (broker["limit"], broker["now"], broker["growth_per_day"], broker["days"]) == \
        ("1,200", "569", "4.67", "135.3")
    for shown, row in zip(page_rows, csv, strict=True):
        for field, header in cap.TABLE_COLUMNS.items():
            said = (shown[field], row[header])
            if field in cap.FIGURES:  # the CSV's numbers: no thousands separators
                assert float(said[0].replace(",", "")) == float(said[1]), (field, said)
            else:
                assert said[0] == said[1], (field, said)


def test_the_html_report_says_the_pages_figures(app, monkeypatch):  # noqa: F811
    page_rows = shown_on_the_page(app, monkeypatch)
    html = reports.capacity_documents(answer(), LABEL)[0]()
    table = html[html.index("<table"):html.index("</table>")]
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", table)]
    assert cells == [row[f] for row in page_rows for f in cap.TABLE_COLUMNS]


@pytest.fixture(scope="module")
def printed() -> str:
    """The capacity report's first part as pdftotext lays it out: the time-to-limit
    table (Chromium prints the HTML report)."""
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    try:
        pdf = printing.html_to_pdf(reports.capacity_documents(answer(), LABEL)[0]())
    except Unavailable as e:
        pytest.skip(str(e))
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True,
                          check=True).stdout.decode()
    return text[text.index("Time to each limit"):text.index("Brokers to add")]


def test_the_capacity_pdf_keeps_each_date_whole(printed):
    assert not re.search(r"\b\d{4}-\d{2}-(\s|$)", printed), printed  # "2024-06-" alone
    frame = capacity.table_frame(answer())
    dates = [d for column in ("date", "earliest", "latest") for d in frame[column]]
    shown = [w for w in printed.split() if re.fullmatch(r"\d{4}-\d{2}-\d{2}", w)]
    assert sorted(shown) == sorted(dates), printed


def test_the_pdf_says_the_pages_figures(app, monkeypatch, printed):  # noqa: F811
    """Each row's figures and dates on one line of the printed table, as the page shows
    them."""
    lines = [line.split() for line in printed.splitlines()]
    figures = ("limit", "now", "growth_per_day", "days", "date", "earliest", "latest")
    for row in shown_on_the_page(app, monkeypatch):
        want = [row[f] for f in figures]
        assert any(want == words[i:i + len(want)] for words in lines
                   for i in range(len(words))), (want, printed)


def test_dates_in_a_table_stay_whole_and_its_text_escaped():
    table = ("<table><thead><tr><th>2024-01-01</th></tr></thead><tbody><tr>"
             "<td>2024-06-14</td><td>2024-01-01 00:40:00 to 2024-01-01 00:45:00</td>"
             "<td>&lt;b&gt;2024-06-14&lt;/b&gt;</td><td>12,112</td><td>20240614</td>"
             "<td>after 2126</td></tr></tbody></table>")
    date = '<span class="date">{}</span>'.format
    assert unbroken_dates(table) == (
        "<table><thead><tr><th>2024-01-01</th></tr></thead><tbody><tr>"
        f"<td>{date('2024-06-14')}</td>"
        f"<td>{date('2024-01-01')} 00:40:00 to {date('2024-01-01')} 00:45:00</td>"
        f"<td>&lt;b&gt;{date('2024-06-14')}&lt;/b&gt;</td><td>12,112</td><td>20240614</td>"
        "<td>after 2126</td></tr></tbody></table>")


def test_the_page_reads_a_figure_it_has_none_of_as_the_reports_do():
    """A limit never reached: no days, no date; "-" on the page as in the report."""
    frame = capacity.table_frame(answer())
    frame.loc[0, ["days", "growth_per_day"]] = None
    [first, *_] = cap.table_records(frame)
    assert first["shown"]["days"] == "-" and first["shown"]["growth_per_day"] == "-"
    assert first["shown"]["limit"] == f"{first['limit']:,}"
