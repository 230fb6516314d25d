"""`railyard serve` finishes Dash's set-up before its server takes a request: Dash does it
on the first request without a lock, so two first requests at once (a worker's threads,
a browser's parallel callbacks) broke each other."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from dashboard.config import parse_config
from dashboard.server import set_up


def test_the_served_app_is_set_up_before_its_first_request(tmp_path):
    from dashboard.app import create_app

    doc = {"clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                     "url": "http://127.0.0.1:9"}}],
           "cache": {"background_dir": str(tmp_path / "cache")},
           "store": {"url": f"sqlite:///{tmp_path / 'railyard.db'}"}}
    app = create_app(parse_config(doc, "cfg"))
    assert not app._got_first_request["setup_server"]
    assert set_up(app) is app and app._got_first_request["setup_server"]
    client = app.server.test_client()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: client.get("/_dash-dependencies"), range(16)))
    counts = {len(a.get_json()) for a in answers if a.status_code == 200}
    assert len(answers) == 16 and all(a.status_code == 200 for a in answers)
    assert len(counts) == 1 and counts.pop() > 0


def _start_up() -> list:
    """A worker's app as far as the collector cares: objects made at start-up."""
    return [{"made": i} for i in range(10_000)]


def _start_worker(answers) -> None:
    """A worker process's start, reporting how many objects the collector then skips."""
    import gc
    import os

    from dashboard.server import _in_worker

    app = _in_worker(_start_up, os.getppid())
    answers.put((len(app), gc.get_freeze_count()))


def test_a_worker_hides_what_start_up_made_from_the_collector():
    """A full collection over a Dash app's start-up objects stalled a worker's threads
    for ~90 ms; a worker freezes them once its app is loaded."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    answers = ctx.Queue()
    worker = ctx.Process(target=_start_worker, args=(answers,))
    worker.start()
    try:
        made, frozen = answers.get(timeout=60)
    finally:
        worker.join(30)
    assert made == 10_000 and frozen >= made


def test_the_parent_process_loads_neither_the_pages_nor_scipy():
    """`railyard serve`'s parent runs the executor and serves no page: Dash, the pages and
    scipy.stats (the forecasts' normal quantile) load in the workers, or on first use, so
    the workers are spawned sooner (0.6 s for scipy.stats alone here)."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, dashboard.server; print(sorted(m for m in "
         "('dash', 'dashboard.app', 'scipy.stats') if m in sys.modules))"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
