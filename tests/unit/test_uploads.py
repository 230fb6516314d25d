"""Uploads on the pages: capped in size, named by the user's file in messages, deleted when
their job ends (however it ends) or after an hour."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from backend.errors import BadInput
from backend.services import quota, uploads


def data_url(raw: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(raw).decode()


def test_an_upload_past_the_cap_is_refused_naming_the_file(tmp_path):
    with pytest.raises(BadInput, match=r"^big.jsonl: .*larger than the 1,000-byte upload "
                                       r"limit \(server.max_upload_bytes\)$"):
        uploads.save_text(data_url(b"x" * 1001), "big.jsonl", tmp_path, ".jsonl",
                          max_bytes=1000)
    assert list(tmp_path.iterdir()) == []
    assert uploads.decode(data_url(b"x" * 1000), "ok", max_bytes=1000) == b"x" * 1000


@pytest.mark.parametrize(("contents", "message"), [
    ("data:;base64,!!!not-base64", "w.jsonl: the upload arrived damaged"),
    (data_url(b"\xff\xfe"), "w.jsonl: not a UTF-8 text file"),
])
def test_damaged_uploads_are_one_line(tmp_path, contents, message):
    with pytest.raises(BadInput, match=message):
        uploads.save_text(contents, "w.jsonl", tmp_path, ".jsonl", max_bytes=1000)


def test_plan_upload_that_is_not_json_names_the_file():
    with pytest.raises(BadInput, match=r"^plan\.json: not a JSON file$"):
        uploads.json_object(data_url(b"{"), "plan.json", 1000)
    assert uploads.json_object(None, None, 1000) is None


def test_messages_name_the_users_file_and_the_upload_goes_when_the_job_ends(tmp_path):
    path = uploads.save_text(data_url(b'{"t": 0, "user": "u", "op": "nope", "partitions": 1}\n'),
                             "mine.jsonl", tmp_path, ".jsonl", max_bytes=1000)
    assert Path(path).exists()
    with pytest.raises(BadInput) as e, uploads.kept_for_job(path, "mine.jsonl"):
        quota.load_requests(path)
    assert str(e.value).startswith("mine.jsonl: line 1: unknown 'op'")
    assert str(tmp_path) not in str(e.value)
    assert not Path(path).exists()
    ok = uploads.save_text(data_url(b"x"), "ok.jsonl", tmp_path, ".jsonl", max_bytes=1000)
    with uploads.kept_for_job(ok, "ok.jsonl"):
        assert Path(ok).exists()
    assert not Path(ok).exists()


def test_uploads_older_than_an_hour_are_purged(tmp_path):
    old = Path(uploads.save_text(data_url(b"old"), "a", tmp_path, ".jsonl"))
    hour_ago = time.time() - uploads.MAX_AGE_SECONDS - 5
    os.utime(old, (hour_ago, hour_ago))
    other = tmp_path / "kept.txt"  # not an upload: never touched
    other.write_text("x")
    os.utime(other, (hour_ago, hour_ago))
    new = Path(uploads.save_text(data_url(b"new"), "b", tmp_path, ".jsonl"))  # saving purges
    assert not old.exists() and new.exists() and other.exists()
