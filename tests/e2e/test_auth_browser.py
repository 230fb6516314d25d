"""Sign-in in headless chromium: the sign-in page, your name on every page, Dash callbacks
answering with the CSRF token dash-renderer sends, sign-out back to the sign-in page."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from werkzeug.security import generate_password_hash

from backend.model.io import save_snapshot
from backend.twin.examples import demo_snapshot
from tests.e2e.conftest import console_errors, screenshot, sign_in, start_dashboard, stop, wait

pytestmark = pytest.mark.e2e

USERS = {"olivia": ("operator", "o-pass-1"), "vera": ("viewer", "v-pass-1")}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("auth")
    save_snapshot(demo_snapshot(), tmp / "demo.parquet")
    config = {"clusters": [{"name": "demo", "gateway": {"type": "twin",
                                                        "url": "http://127.0.0.1:9"},
                            "snapshot": str(tmp / "demo.parquet")}],
              "auth": {"secret_key_file": str(tmp / "secret_key"), "users": [
                  {"name": n, "role": r, "password_hash": generate_password_hash(p)}
                  for n, (r, p) in USERS.items()]}}
    d = start_dashboard(tmp, config)
    try:
        yield d
    finally:
        stop(d.proc)


def test_sign_in_see_your_name_sign_out(browser, dashboard):
    browser.delete_all_cookies()
    browser.get(dashboard.url + "/brokers")
    wait(browser, 20).until(ec.url_contains("/login"))
    browser.find_element(By.ID, "login-user").send_keys("olivia")
    browser.find_element(By.ID, "login-password").send_keys("wrong")
    browser.find_element(By.ID, "login-submit").click()
    # the answer is a new page: wait for it rather than racing the form's submission
    wait(browser, 20).until(ec.text_to_be_present_in_element(
        (By.ID, "login-error"), "Wrong user name or password"))
    # the name typed is kept (it was emptied) and the cursor waits in the password
    assert browser.find_element(By.ID, "login-user").get_attribute("value") == "olivia"
    assert browser.switch_to.active_element.get_attribute("id") == "login-password"

    console_errors(browser)
    sign_in(browser, dashboard.url, "olivia", USERS["olivia"][1])
    assert browser.find_element(By.ID, "account-role").text == "operator"
    # callbacks answer (their POSTs carry the CSRF token): the picker follows the URL
    browser.get(dashboard.url + "/brokers?cluster=demo")
    wait(browser, 20).until(ec.text_to_be_present_in_element(
        (By.ID, "account-user"), "olivia"))
    wait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR,
                                                               "#br-grid .ag-row"))
    screenshot(browser, "signed-in-brokers")
    assert console_errors(browser) == []

    browser.find_element(By.ID, "account-sign-out").click()
    wait(browser, 20).until(ec.url_contains("/login"))
    browser.get(dashboard.url + "/")
    wait(browser, 20).until(ec.url_contains("/login"))
    assert console_errors(browser) == []
    browser.get("about:blank")  # nothing of this server's left polling once it stops


def test_a_cookie_put_back_after_sign_out_does_not_sign_in_again(browser, dashboard):
    """Issue 27 item 1: sign-out ends the session on the server, so the old cookie, put
    back in the browser as someone who copied it would, opens nothing."""
    from dashboard.auth import session_cookie_name

    browser.delete_all_cookies()
    sign_in(browser, dashboard.url, "olivia", USERS["olivia"][1])
    name = session_cookie_name(int(dashboard.url.rsplit(":", 1)[1]))
    copied = browser.get_cookie(name)
    assert "olivia" not in copied["value"]  # an opaque id, nothing of the user inside
    browser.find_element(By.ID, "account-sign-out").click()
    wait(browser, 20).until(ec.url_contains("/login"))

    browser.delete_all_cookies()
    browser.add_cookie({"name": name, "value": copied["value"], "path": "/"})
    browser.get(dashboard.url + "/brokers")
    wait(browser, 20).until(ec.url_contains("/login"))
    assert browser.find_elements(By.ID, "account-user") == []
    screenshot(browser, "replayed-cookie-after-sign-out")
    browser.get("about:blank")


def test_a_name_in_capitals_signs_in_as_the_same_user(browser, dashboard):
    """Issue 27 item 4: names are compared normalised, so 'OLIVIA' is olivia."""
    browser.delete_all_cookies()
    browser.get(dashboard.url + "/login")
    browser.find_element(By.ID, "login-user").send_keys("OLIVIA")
    browser.find_element(By.ID, "login-password").send_keys(USERS["olivia"][1])
    browser.find_element(By.ID, "login-submit").click()
    wait(browser, 30).until(ec.text_to_be_present_in_element(
        (By.ID, "account-user"), "olivia"))
    assert browser.find_element(By.ID, "account-user").text == "olivia"
    browser.find_element(By.ID, "account-sign-out").click()
    wait(browser, 20).until(ec.url_contains("/login"))
    browser.get("about:blank")
