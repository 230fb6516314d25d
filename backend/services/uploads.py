"""Files users upload on the pages (dcc.Upload data URLs): size-capped, named by the user's
file name in every message, and deleted when the job that read them ends, or after an hour
when a job never ended (a server that stopped mid-job, a browser that went away).
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


def decode(contents: str, filename: str | None, max_bytes: int) -> bytes:
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


def decode_text(contents: str, filename: str | None, max_bytes: int) -> str:
    """An uploaded text file (UTF-8)."""
    try:
        return decode(contents, filename, max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{filename or 'upload'}: not a UTF-8 text file") from None


def parse_json(contents: str | None, filename: str | None, max_bytes: int) -> dict | None:
    """An uploaded JSON file (a reassignment plan) parsed; None when nothing was uploaded."""
    if not contents:
        return None
    try:
        return json.loads(decode_text(contents, filename, max_bytes))
    except json.JSONDecodeError:
        raise BadInput(f"{filename or 'upload'}: not a JSON file") from None


def save(contents: str, filename: str | None, directory: str | Path, max_bytes: int,
         suffix: str = ".jsonl") -> Path:
    """Write an upload under ``directory`` for the loaders to read; older uploads that
    outlived MAX_AGE_SECONDS are removed first."""
    text = decode_text(contents, filename, max_bytes)
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    purge(folder)
    path = folder / f"{PREFIX}{uuid.uuid4().hex}{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


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
def kept_for_job(path: Path | None, filename: str | None) -> Iterator[None]:
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
            path.unlink(missing_ok=True)
