"""PDFs of the exported reports, printed by headless Chromium from the same HTML (so the
PDF shows exactly what the HTML report shows, charts included)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from backend.errors import Unavailable

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT_SECONDS = 90


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise Unavailable("PDF printing", "no headless Chromium found (install Debian's chromium "
                      "package; make install does); the HTML report has the same content")


def html_to_pdf(html: str) -> bytes:
    """The PDF Chromium prints of ``html`` (A4, backgrounds, no header/footer)."""
    exe = browser()
    with tempfile.TemporaryDirectory(prefix="railyard-print-") as tmp:
        page, pdf = Path(tmp) / "report.html", Path(tmp) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        try:
            done = subprocess.run(
                [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                 "--no-first-run", f"--user-data-dir={tmp}/profile", "--no-pdf-header-footer",
                 "--run-all-compositor-stages-before-draw", "--virtual-time-budget=15000",
                 f"--print-to-pdf={pdf}", page.as_uri()],
                capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise Unavailable("PDF printing", f"Chromium did not finish within "
                              f"{TIMEOUT_SECONDS} s") from None
        if not pdf.exists() or pdf.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable("PDF printing", f"Chromium printed nothing ({last})")
        return pdf.read_bytes()
