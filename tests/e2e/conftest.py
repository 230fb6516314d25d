"""Browser tests: `railyard serve` in a subprocess on loopback, headless Debian chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import yaml

from backend.model.io import save_snapshot
from backend.model.snapshot import Snapshot
from backend.twin.api import TwinApi
from backend.twin.cluster import TwinCluster
from backend.twin.gateway import TwinGateway
from backend.twin.generate import generate_snapshot
from tests.servers import free_port, poll, stop

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--window-size=1400,1000")


def wait_http(url: str, timeout: float, proc: subprocess.Popen, log: Path,
              headers: dict[str, str] | None = None) -> None:
    """Until the dashboard answers ``url`` (asked with ``headers``: a single-sign-on
    proxy's, where the page needs them)."""
    def railyard() -> bool:  # the dashboard itself, not something else on the port
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=2) as r:
            return r.status == 200 and b"<title>Railyard" in r.read()

    poll(railyard, proc, log, timeout, f"the dashboard at {url}")


class Dashboard:
    """A running `railyard serve` and where to find it."""

    def __init__(self, url: str, proc: subprocess.Popen, log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log


def start_dashboard(tmp: Path, config: dict, warm_spark: bool = False,
                    headers: dict[str, str] | None = None) -> Dashboard:
    port = free_port()
    config = {**config, "server": {"refresh_seconds": 5, **config.get("server", {}),
                                   "host": "127.0.0.1", "port": port},
              "cache": {"background_dir": str(tmp / "cache"), **config.get("cache", {})},
              "store": config.get("store", {"url": f"sqlite:///{tmp / 'railyard.db'}"})}
    path = tmp / "railyard.yaml"
    path.write_text(yaml.safe_dump(config))
    log = tmp / "serve.log"
    cmd = [str(Path(sys.executable).parent / "railyard"), "serve", "--config", str(path)]
    if not warm_spark:
        cmd.append("--no-warm-spark")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/", 60, proc, log, headers)
    except BaseException:
        stop(proc)
        raise
    return Dashboard(url, proc, log)


@contextmanager
def serve_on_running_twin(tmp: Path, snap: Snapshot, cluster: dict,
                          users: dict[str, tuple[str, str]], speed: float = 4.0):
    """`railyard serve` with sign-in on one cluster played by a twin whose clock runs
    (``speed`` simulated seconds a wall second, no traffic noise) behind its token-guarded
    HTTP API; ``cluster`` adds to the cluster's config (its name, guards, ...). Yields
    (twin service, dashboard); both stop."""
    from backend.twin.cluster import TwinSettings
    from backend.twin.runtime import TwinService
    from backend.twin.scenario import Scenario

    token = f"e2e-twin-token-{snap.cluster}"
    (tmp / "twin.token").write_text(token + "\n")
    twin = TwinService(snap, Scenario(settings=TwinSettings(traffic_noise=0.0)),
                       speed=speed, api_port=0, api_token=token).start()
    try:
        d = start_dashboard(tmp, {"clusters": [{
            "gateway": {"type": "twin", "url": twin.api.url,
                        "token_file": str(tmp / "twin.token")}, **cluster}],
            **signed_in_config(tmp, users)})
        try:
            yield twin, d
        finally:
            stop(d.proc)
    finally:
        twin.stop()


@contextmanager
def serve_on_twin(tmp: Path, snap: Snapshot, name: str, extra: dict) -> Iterator[Dashboard]:
    """`railyard serve` on one cluster ``name``, played by a twin over HTTP from ``snap``
    (its snapshot file beside it); ``extra`` adds to the config (store, users). Both stop."""
    save_snapshot(snap, tmp / f"{name}.parquet")
    gateway = TwinGateway(TwinCluster(snap))
    twin = TwinApi(gateway).start()
    try:
        d = start_dashboard(tmp, {"clusters": [{
            "name": name, "gateway": {"type": "twin", "url": twin.url},
            "snapshot": str(tmp / f"{name}.parquet")}], **extra})
        d.twin = gateway  # a test changes the cluster under the dashboard through it
        try:
            yield d
        finally:
            stop(d.proc)
    finally:
        twin.stop()


def signed_in_config(tmp: Path, users: dict[str, tuple[str, str]]) -> dict:
    """The config's auth for ``users`` ({name: (role, password)}) and a store of its own."""
    from werkzeug.security import generate_password_hash

    return {"store": {"url": f"sqlite:///{tmp / 'railyard.db'}"},
            "auth": {"secret_key_file": str(tmp / "secret_key"), "users": [
                {"name": n, "role": r, "password_hash": generate_password_hash(p)}
                for n, (r, p) in users.items()]}}


def new_chromium():
    """A headless Debian chromium with its own cookies (a session of its own)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="module")
def second_browser():
    """A second user's own browser: separate cookies, so a separate session."""
    driver = new_chromium()
    try:
        yield driver
    finally:
        driver.quit()


_SESSION_BROWSER: list = []  # the session's browser once a test asked for it


@pytest.fixture(scope="session")
def browser():
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("chromium and chromium-driver are not installed (make test installs them)")
    driver = new_chromium()
    _SESSION_BROWSER.append(driver)
    try:
        yield driver
    finally:
        _SESSION_BROWSER.clear()
        driver.quit()


@pytest.fixture(scope="module", autouse=True)
def _leave_the_module_page():
    """After a module, the session browser leaves its page and forgets the console: that
    page's refresh timers keep calling the module's server after it stopped, and their
    failed requests would otherwise be the next module's first console errors."""
    yield
    for driver in _SESSION_BROWSER:
        driver.get("about:blank")
        driver.get_log("browser")


@pytest.fixture
def downloads(browser, tmp_path):
    """A fresh folder the browser saves downloads into (Chromium's DevTools protocol)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    browser.execute_cdp_cmd("Page.setDownloadBehavior",
                            {"behavior": "allow", "downloadPath": str(folder)})
    return folder


def wait_download(folder: Path, suffix: str, timeout: float = 30) -> Path:
    """The one finished file with this suffix that arrives in folder (not a .crdownload)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        if done and not any(p.name.endswith(".crdownload") for p in folder.iterdir()):
            return done[0]
        time.sleep(0.2)
    raise TimeoutError(f"no *{suffix} arrived in {folder} in {timeout} s: "
                       f"{[p.name for p in folder.iterdir()]}")


def wait(driver, timeout: float = 60, poll_frequency: float = 0.5):
    """A wait that looks an element up afresh when the page drew it again meanwhile (a
    grid filtering its rows, a panel on a timer): a stale element is "not yet", not a
    failure."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency,
                         ignored_exceptions=(StaleElementReferenceException,))


def choose(driver, dropdown_id: str, value: str) -> None:
    """Pick ``value`` in a dcc.Dropdown (Dash 4: a button opening a list of options)."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, dropdown_id).click()
    wait(driver, 10).until(lambda d: d.find_element(
        By.XPATH, f"//label[@role='option'][.//input[@value='{value}']]")).click()


def console_errors(driver) -> list[str]:
    """Severe browser console entries since the last call (the log is drained on read)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def shown_text(driver, element_id: str) -> str:
    """An element's text for a failure's message, even while the page draws it again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.ID, element_id)
    try:
        return found[0].text if found else "(not on the page)"
    except StaleElementReferenceException:
        return "(being drawn again)"


def slow_timer_answers(driver, interval_id: str, seconds: float) -> None:
    """Hold every answer to a callback fired by the ``interval_id`` timer for ``seconds``
    in this page (until it is loaded again), counting those in flight in
    ``window.refreshing``: a click is then made while a refresh is on its way, as on a
    slow server, where it once lost its answer (dash-renderer holds a callback whose input
    is an outstanding output, and the refresh then writes the server's value over it)."""
    hold_answers(driver, f"{interval_id}.n_intervals", seconds, "refreshing")


def hold_answers(driver, prop_id: str, seconds: float, count: str) -> None:
    """Hold every answer to a callback fired by ``prop_id`` ("id.prop") for ``seconds`` in
    this page (until it is loaded again), as a slow server would: ``window[count]`` counts
    those in flight, ``count + 'Sent'`` and ``count + 'Landed'`` those sent and landed.
    Holds for several props stack (each wraps the fetch the page has)."""
    driver.execute_script("""
        const prop = arguments[0], ms = arguments[1] * 1000, count = arguments[2];
        const fetch0 = window.fetch;
        window[count] = 0;
        window[count + 'Sent'] = 0;
        window[count + 'Landed'] = 0;
        window.fetch = async function (url, init) {
            const body = init && typeof init.body === 'string' ? init.body : '';
            if (!String(url).includes('_dash-update-component')
                    || !(JSON.parse(body || '{}').changedPropIds || []).includes(prop)) {
                return fetch0.apply(this, arguments);
            }
            window[count] += 1;
            window[count + 'Sent'] += 1;
            try {
                const answer = await fetch0.apply(this, arguments);
                await new Promise(done => setTimeout(done, ms));
                return answer;
            } finally {
                window[count] -= 1;
                window[count + 'Landed'] += 1;
            }
        };""", prop_id, seconds, count)


def refreshes_landed(driver, timeout: float = 30) -> None:
    """Until every refresh slow_timer_answers held that was sent before now has landed
    (the page then shows what the last of them answered, drawn over any click's)."""

    sent = driver.execute_script("return window.refreshingSent")
    wait(driver, timeout).until(
        lambda d: d.execute_script("return window.refreshingLanded") >= sent)
    time.sleep(0.2)  # the last answer drawn


def click_during_a_refresh(driver, find, timeout: float = 30) -> None:
    """Click what ``find(driver)`` returns once a refresh held by slow_timer_answers is in
    flight."""

    wait(driver, timeout).until(
        lambda d: d.execute_script("return window.refreshing > 0"))
    find(driver).click()


def screenshot(driver, name: str) -> None:
    """The whole page, as tall as its content, under artifacts/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = driver.get_window_size()
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size["width"], max(size["height"], height + 120))
    try:
        driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    finally:
        driver.set_window_size(size["width"], size["height"])


class Demo:
    """A running `railyard demo`: its dashboard URL and the processes it said it started."""

    def __init__(self, url: str, proc: subprocess.Popen, log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log

    @property
    def prometheus_pids(self) -> list[int]:
        return [int(m) for m in re.findall(r"prometheus: \S+ .*\(pid (\d+)\)",
                                           self.log.read_text())]

    @property
    def users(self) -> dict[str, tuple[str, str]]:
        """The demo users it printed: name -> (role, password)."""
        return {name: (role, password) for name, role, password in re.findall(
            r"user: (\S+) \((\w+)\) password (\S+)", self.log.read_text())}

    def user(self, role: str) -> tuple[str, str]:
        """(name, password) of the demo user with ``role``."""
        return next((n, p) for n, (r, p) in self.users.items() if r == role)


def type_into(element, text: str) -> None:
    """Replace a Dash input's value the way a person does (React sees every key)."""
    from selenium.webdriver.common.keys import Keys

    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.DELETE)
    element.send_keys(text)


def olga_and_arne(browser, second_browser, url: str, users: dict) -> tuple:
    """The operator olga in ``browser`` (fresh cookies, console cleared) and the approver
    arne in ``second_browser``, both signed in: most plan tests' two people."""
    browser.delete_all_cookies()
    console_errors(browser)
    sign_in(browser, url, "olga", users["olga"][1])
    sign_in(second_browser, url, "arne", users["arne"][1])
    return browser, second_browser


def sign_in(driver, url: str, user: str, password: str) -> None:
    """Through the sign-in page, as a person would; waits until the page names the user."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url + "/login")
    driver.find_element(By.ID, "login-user").send_keys(user)
    driver.find_element(By.ID, "login-password").send_keys(password)
    driver.find_element(By.ID, "login-submit").click()
    WebDriverWait(driver, 30).until(
        lambda d: [e for e in d.find_elements(By.ID, "account-user") if e.text == user])


def start_demo(tmp: Path, speed: float = 10.0, scrape_interval: float = 1.0) -> Demo:
    """`railyard demo` (twin, exporters, Prometheus live and incident history, dashboard)
    on free loopback ports; Spark is not warmed (the what-if tests cover Spark)."""
    port = free_port()
    log = tmp / "demo.log"
    cmd = [str(Path(sys.executable).parent / "railyard"), "demo", "--port", str(port),
           "--prometheus-port", "0", "--home", str(tmp / "home"), "--speed", str(speed),
           "--scrape-interval", str(scrape_interval), "--no-warm-spark"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/", 120, proc, log)
    except BaseException:
        stop(proc)
        raise
    return Demo(url, proc, log)


def stop_demo(demo: Demo) -> None:
    """SIGTERM, as an operator's Ctrl-C; everything the demo started must be gone after."""
    pids = demo.prometheus_pids
    stop(demo.proc)
    alive = [p for p in pids if _running(p)]
    assert not alive, f"railyard demo left Prometheus running: {alive}"
    assert "stopped the twin" in demo.log.read_text()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# what a drawn plotly chart shows: its layout's annotation texts, its traces, and where the
# browser drew its title, axis titles, legend and annotations (client rectangles)
FIGURE = """
const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!g || !g._fullLayout) { return null; }
const box = e => { if (!e) { return null; } const r = e.getBoundingClientRect();
                   return [r.left, r.top, r.right, r.bottom]; };
return {
  annotations: (g.layout.annotations || []).map(a => a.text),
  traces: g.data.map(t => ({name: t.name, x: t.x, y: t.y, text: t.text || null,
                            width: t.line ? t.line.width : null,
                            size: t.marker ? t.marker.size : null})),
  title: box(g.querySelector('.gtitle')), ytitle: box(g.querySelector('.ytitle')),
  xtitle: box(g.querySelector('.xtitle')), legend: box(g.querySelector('.legend')),
  svg: box(g.querySelector('.main-svg')),
  notes: Array.from(g.querySelectorAll('.annotation')).map(e => ({
    text: e.textContent, box: box(e.querySelector('.annotation-text') || e)}))};
"""


def figure_view(driver, css: str) -> dict | None:
    """The chart under ``css`` as the browser drew it (see FIGURE)."""
    return driver.execute_script(FIGURE, css)


def inside(a: list, b: list) -> bool:
    """Rectangle a lies within rectangle b (drawn whole, not cut off at b's edge)."""
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def overlap(a: list | None, b: list | None) -> bool:
    """Two drawn rectangles [left, top, right, bottom] cover some of the same pixels."""
    return bool(a and b and a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


# every piece of text a plotly chart drew (titles, ticks, legend, bar values, annotations)
# and the pairs of them drawn over each other
TEXTS_OVERLAPPING = """
const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!g) { return null; }
const texts = Array.from(g.querySelectorAll('text'))
  .filter(e => e.textContent.trim() && e.getBoundingClientRect().width > 0)
  .map(e => { const r = e.getBoundingClientRect();
              return {text: e.textContent, box: [r.left, r.top, r.right, r.bottom]}; });
const hit = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
const pairs = [];
for (let i = 0; i < texts.length; i++) {
  for (let j = i + 1; j < texts.length; j++) {
    if (hit(texts[i].box, texts[j].box)) { pairs.push([texts[i].text, texts[j].text]); }
  }
}
return {count: texts.length, pairs: pairs};
"""


def texts_overlapping(driver, css: str) -> dict | None:
    """{count: texts drawn, pairs: [(text, text) drawn over each other]} for a chart."""
    return driver.execute_script(TEXTS_OVERLAPPING, css)


def twin_snapshot(cluster: str) -> Snapshot:
    """The small cluster the two-cluster dashboards run: 6 brokers in 3 racks, 30
    partitions at RF 3, seed 7."""
    return generate_snapshot(6, 3, 3, 30, 3, seed=7, cluster=cluster)


@contextmanager
def twin_clusters_dashboard(tmp: Path, names: tuple[str, ...],
                            users: dict[str, tuple[str, str]]) -> Iterator[Dashboard]:
    """`railyard serve` signed in as ``users``, on one twin per name (twin_snapshot)."""
    with ExitStack() as stack:
        clusters = []
        for name in names:
            save_snapshot(twin_snapshot(name), tmp / f"{name}.parquet")
            twin = TwinApi(TwinGateway(TwinCluster(twin_snapshot(name)))).start()
            stack.callback(twin.stop)
            clusters.append({"name": name, "gateway": {"type": "twin", "url": twin.url},
                             "snapshot": str(tmp / f"{name}.parquet")})
        d = start_dashboard(tmp, {"clusters": clusters, **signed_in_config(tmp, users)})
        stack.callback(stop, d.proc)
        yield d


def propose_move(api: str, user: str, password: str, cluster: str, title: str,
                 partition: int) -> dict:
    """Through the API: a one-partition move on a twin_snapshot cluster to brokers that
    do not hold it."""
    from tests.plan_helpers import api_call

    snap = twin_snapshot(cluster)
    topic = str(snap.topic_names[0])
    replicas = snap.replicas_of(snap.partition_row(topic, partition))
    spare = [b for b in map(int, snap.broker_ids) if b not in replicas][:len(replicas)]
    return api_call(api, user, password, "POST", "/plans", {
        "cluster": cluster, "kind": "reassignment", "title": title, "plan": {
            "version": 1, "partitions": [
                {"topic": topic, "partition": partition, "replicas": spare}]}})
