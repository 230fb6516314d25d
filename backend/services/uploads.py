"""Files the operator uploads in a browser (a Dash upload's data URL) as the services read
them: a reassignment plan's JSON, or a workload's text written where the loaders read.

Uploads are capped in size (server.max_upload_bytes), named by the user's file name in
every message, and deleted when the job that read them ends, or after an hour when a job
never ended (a server that stopped mid-job, a browser that went away).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.errors import BadInput

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
MAX_AGE_SECONDS = 3600
PREFIX = "upload-"


def decode(contents: str, filename: str | None, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a data URL, refused past ``max_bytes`` (server.max_upload_bytes)."""
    name = filename or "upload"
    _, _, data = contents.partition(",")
    if len(data) * 3 // 4 > max_bytes + 3:  # refuse before decoding a huge upload
        raise BadInput(f"{name}: larger than the {max_bytes:,}-byte upload limit "
                       "(server.max_upload_bytes)")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadInput(f"{name}: the upload arrived damaged (not base64)") from None
    if len(raw) > max_bytes:
        raise BadInput(f"{name}: {len(raw):,} bytes, larger than the {max_bytes:,}-byte upload "
                       "limit (server.max_upload_bytes)")
    return raw


def text(contents: str, filename: str | None, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """A ``data:...;base64,...`` URL -> its UTF-8 text; BadInput naming the file."""
    try:
        return decode(contents, filename, max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{filename or 'upload'}: not a UTF-8 text file") from None


def json_object(contents: str | None, filename: str | None,
                max_bytes: int = DEFAULT_MAX_BYTES) -> dict | None:
    """An uploaded JSON file (a reassignment plan) -> the parsed object; None if none."""
    if not contents:
        return None
    try:
        return json.loads(text(contents, filename, max_bytes))
    except json.JSONDecodeError:
        raise BadInput(f"{filename or 'upload'}: not a JSON file") from None


def save_text(contents: str, filename: str | None, directory: str | Path, suffix: str,
              max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """An uploaded text file written under ``directory`` so the file loaders read it and
    report its line numbers; uploads that outlived MAX_AGE_SECONDS are removed first."""
    body = text(contents, filename, max_bytes)
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    purge(folder)
    path = folder / f"{PREFIX}{uuid.uuid4().hex}{suffix}"
    path.write_text(body, encoding="utf-8")
    return str(path)


def purge(directory: str | Path, max_age: float = MAX_AGE_SECONDS,
          now: float | None = None) -> int:
    """Delete uploads older than ``max_age`` seconds; returns how many went."""
    cutoff = (time.time() if now is None else now) - max_age
    gone = 0
    for path in Path(directory).glob(f"{PREFIX}*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                gone += 1
        except FileNotFoundError:  # another request purged it first
            continue
    return gone


@contextmanager
def kept_for_job(path: str | None, filename: str | None) -> Iterator[None]:
    """Around the job that reads an upload: messages name the user's file, not the server's
    path, and the upload is deleted when the job ends, however it ends."""
    try:
        yield
    except BadInput as e:
        if path is None:
            raise
        raise BadInput(str(e).replace(str(path), filename or "upload")) from None
    finally:
        if path is not None:
            Path(path).unlink(missing_ok=True)
