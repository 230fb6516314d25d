"""Shared test set-up: deterministic, loopback only."""

import os
import sys
from collections import Counter

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("TZ", "UTC")


@pytest.fixture(autouse=True)
def _each_page_registered_once():
    """Dash's page registry is per process: a page module run twice under two names (a test
    that does `import pages.x`) makes every later app answer 500. Fail that test, not a
    later one in another file."""
    yield
    pages = sys.modules.get("dash._pages")  # never import Dash for tests that do not
    if pages is None:
        return
    paths = Counter(page["path"] for page in pages.PAGE_REGISTRY.values())
    twice = sorted(m for m, page in pages.PAGE_REGISTRY.items() if paths[page["path"]] > 1)
    assert not twice, (f"page modules {twice} share a path: use the module the app serves "
                       f"(sys.modules[page['module']]), not `import pages.x`")
