"""Numbers typed into forms: empty is told from not-a-number and from out-of-range, and
every refusal names the field in one line (a browser number field sent None for all
three, and the pages used their defaults in silence)."""

from __future__ import annotations

import argparse

import pytest

from backend.cli.reassign import broker_ids as cli_broker_ids
from backend.errors import BadInput
from backend.model.bounds import MAX_INT
from backend.services.fields import BrokerIdRefused, broker_ids, number


@pytest.mark.parametrize("typed, bounds, read", [
    ("", {"default": 7}, 7),
    (None, {}, None),
    (" 2.5 ", {"above": 0}, 2.5),
    ("2", {"whole": True}, 2),
    (2.0, {"whole": True}, 2),  # what a number field or the API sends
    ("1e3", {"low": 0}, 1000.0),
    ("-100", {"low": -100, "high": 1000}, -100.0),
    (str(MAX_INT), {"limit": MAX_INT, "whole": True}, MAX_INT),
])
def test_numbers_read(typed, bounds, read):
    got = number(typed, "x", **bounds)
    assert got == read and type(got) is type(read)


@pytest.mark.parametrize("typed, bounds, message", [
    ("", {"required": True, "low": 1, "whole": True}, "partitions: give a whole number of at "
                                                       "least 1"),
    ("", {"required": "the number to keep"}, "partitions: give the number to keep"),
    ("2.5", {"low": 1, "whole": True}, "partitions: give a whole number of at least 1, got 2.5"),
    ("-5", {"above": 0, "unit": "MB/s", "empty": "the suggested rate"},
     "partitions: give a number larger than 0 MB/s, or leave it empty for the suggested rate, "
     "got -5"),
    ("0", {"above": 0}, "partitions: give a number larger than 0, got 0"),
    ("1.5", {"above": 0, "high": 1}, "partitions: give a number larger than 0 and at most 1, "
                                     "got 1.5"),
    ("abc", {}, "partitions: give a number, got 'abc'"),
    ("١٢", {}, "partitions: give a number, got '١٢'"),  # Arabic-Indic digits: float() reads them
    ("1_000", {}, "partitions: give a number, got '1_000'"),
    ("nan", {}, "partitions: give a number, got 'nan'"),
    ("1,5", {}, "partitions: give a number, got '1,5'"),
    ("1e18", {"whole": True, "limit": MAX_INT},
     "partitions: 1e18 is past the largest value, 2,147,483,647"),
    ("1e400", {}, "partitions: give a number, got 1e400"),
    (True, {}, "partitions: give a number, got 'True'"),
    ("9" * 40, {"limit": MAX_INT},
     "partitions: 999999999999999999999... is past the largest value, 2,147,483,647"),
])
def test_refusals_name_the_field_and_what_it_takes(typed, bounds, message):
    with pytest.raises(BadInput) as e:
        number(typed, "partitions", **bounds)
    assert str(e.value) == message



def test_broker_ids_as_typed():
    assert broker_ids(" 7, 8 9", "brokers") == [7, 8, 9]
    assert broker_ids(None, "brokers") == []
    for typed, message in [
            ("1,\u0661", "brokers: '\u0661' is not a broker id"),  # int() reads Arabic-Indic
            ("-1", "brokers: '-1' is not a broker id"),
            ("2147483648", "brokers: '2147483648' is not a broker id"),  # broker.id is an int
            ("1,1", "brokers: broker 1 is named twice")]:
        with pytest.raises(BadInput) as e:
            broker_ids(typed, "brokers")
        assert str(e.value).startswith(message)


def test_a_broker_id_refusal_carries_what_it_refused():
    """What `railyard reassign --brokers` words its own way (it reads the list here)."""
    with pytest.raises(BrokerIdRefused) as e:
        broker_ids("7, x8", "brokers")
    assert (e.value.why, e.value.twice) == (
        "broker must be an id from 0 to 2147483647, got 'x8'", None)
    with pytest.raises(BrokerIdRefused) as e:
        broker_ids("7 8,7", "brokers")
    assert (str(e.value), e.value.twice) == ("brokers: broker 7 is named twice", 7)


def test_the_reassign_flag_reads_broker_ids_as_the_form_does():
    """One reading of a broker id list (the CLI's was a near-copy of the form's): the flag
    takes what the form takes, spaces too, and says its refusals as it did."""
    assert cli_broker_ids("3, 2") == (3, 2)
    assert cli_broker_ids("3 2,4") == (3, 2, 4)  # refused before: '3 2' was one id
    for typed, message in [
            ("\u0663", "expected comma-separated broker ids: broker must be an id from 0 to "
                       "2147483647, got '\u0663'"),
            ("1" * 5000, "expected comma-separated broker ids: broker must be an id from 0 "
                         f"to 2147483647, got '{'1' * 37}...'"),
            ("3,3", "broker 3 is named twice in '3,3'"),
            (" , ", "expected at least one broker id")]:
        with pytest.raises(argparse.ArgumentTypeError) as e:
            cli_broker_ids(typed)
        assert str(e.value) == message
