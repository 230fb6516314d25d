"""A wrong password over the API was answered "credentials required: HTTP Basic with a
configured user", as if none had been sent, while the sign-in page says "Wrong user name
or password." (a new user's report). Credentials given and wrong are said to be wrong,
never said back; none given (or none readable) still asks for them."""

from __future__ import annotations

import base64

from dashboard import auth
from dashboard.sign_in_failures import FAILURES_ALLOWED
from tests.unit import test_api
from tests.unit.test_api import PASSWORD, basic

env = test_api.env  # the API tests' app on a twin, with a user per role

REQUIRED = "credentials required: HTTP Basic with a configured user"


def get(env, authorization: str | None, address: str):
    headers = {} if authorization is None else {"Authorization": authorization}
    return env["client"].get("/api/v1/plans", headers=headers,
                             environ_base={"REMOTE_ADDR": address})


def basic_of(name: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


def test_wrong_credentials_are_said_to_be_wrong_and_not_said_back(env):
    for name, password in (("operator1", "hunter2-secret"), ("s3cret-typed-as-name", "x")):
        answer = get(env, basic_of(name, password), "10.7.0.1")
        assert answer.status_code == 401
        assert answer.get_json() == {"error": "wrong user name or password"}
        assert answer.headers["WWW-Authenticate"] == auth.BASIC_CHALLENGE
        said = answer.get_data(as_text=True)
        assert password not in said and name not in said


def test_no_credentials_still_asks_for_them(env):
    for authorization in (None, "Basic !!", basic_of("operator1", "x")[:-4], "Bearer x"):
        answer = get(env, authorization, "10.7.0.2")
        assert answer.status_code == 401, authorization
        assert answer.get_json() == {"error": REQUIRED}, authorization
        assert answer.headers["WWW-Authenticate"].startswith("Basic")
    right = env["client"].get("/api/v1/plans", headers=basic("viewer1"),
                              environ_base={"REMOTE_ADDR": "10.7.0.2"})
    assert right.status_code == 200 and "plans" in right.get_json()
    assert PASSWORD.format("viewer1") not in right.get_data(as_text=True)


def test_the_failure_that_makes_the_address_wait_says_how_long(env):
    """The guesses an address may make are wrong, one by one; the one that makes it wait
    is answered 429 with Retry-After, as before."""
    wrong = basic_of("operator1", "guess")
    answers = [get(env, wrong, "10.7.0.3") for _ in range(FAILURES_ALLOWED + 1)]
    assert [a.status_code for a in answers] == [401] * (FAILURES_ALLOWED - 1) + [429, 429]
    assert all(a.get_json() == {"error": "wrong user name or password"}
               for a in answers[:-2])
    assert answers[-2].get_json()["error"].startswith("too many failed sign-ins")
    assert "Retry-After" in answers[-2].headers
