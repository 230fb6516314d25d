"""Capacity's PDF keeps each date on one line (a new user's report): a narrow column of
the printed time-to-limit table broke 2024-06-14 at its hyphens, "2024-06-" over "14".
The reports' tables now keep every date in a cell whole (components.reports
.unbroken_dates, span.date: nowrap)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from backend.errors import Unavailable
from backend.services import capacity, printing
from components.reports import unbroken_dates
from dashboard import reports
from tests.unit.test_capacity_reports import answer

LABEL = "2024-03-31"


def test_the_capacity_pdf_keeps_each_date_whole():
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    try:
        pdf = printing.html_to_pdf(reports.capacity_documents(answer(), LABEL)[0]())
    except Unavailable as e:
        pytest.skip(str(e))
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True,
                          check=True).stdout.decode()
    table = text[text.index("Time to each limit"):text.index("Brokers to add")]
    assert not re.search(r"\b\d{4}-\d{2}-(\s|$)", table), table  # "2024-06-" alone
    frame = capacity.table_frame(answer())
    dates = [d for column in ("date", "earliest", "latest") for d in frame[column]]
    printed = [w for w in table.split() if re.fullmatch(r"\d{4}-\d{2}-\d{2}", w)]
    assert sorted(printed) == sorted(dates), table

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
