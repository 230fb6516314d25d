"""Files the operator uploads in a browser (a Dash upload's data URL) as the services read
them: a reassignment plan's JSON, or a workload's text written where the loaders read.

Uploads are capped in size (server.max_upload_bytes), named by the user's file name in
every message, and deleted when the job that read them ends, or after an hour when a job
never ended (a server that stopped mid-job, a browser that went away).

A reassignment plan uploaded to preview (PlanUploads) waits on disk, not in memory: the
server once held each parsed upload in its cache for an hour, and fourteen 29 MB uploads
took it from 752 to 1,163 MB. On disk the uploads are bounded in bytes per user and in
total, oldest dropped first, and only those who may propose a plan upload one.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backend.errors import BadInput
from backend.model import json_input
from backend.store.workflow import Actor, may

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
    return json_input.loads(text(contents, filename, max_bytes), filename or "upload",
                            invalid="not a JSON file")


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


class PlanUploads:
    """Reassignment plans uploaded to preview, one file each under ``directory`` until
    they are an hour old or make room for newer ones. One user holds at most
    USER_UPLOADS uploads' worth of bytes (the plan being previewed and the next), all
    users together TOTAL_UPLOADS' worth; past either the oldest files go first, so a
    user's newest upload is always kept. Viewers do not upload: the upload exists to be
    proposed, which a viewer may not do (they preview the planner's plans instead)."""

    USER_UPLOADS = 2
    TOTAL_UPLOADS = 8
    TOKEN = re.compile(r"[0-9a-f]{32}")

    def __init__(self, directory: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.user_bytes = self.USER_UPLOADS * max_bytes
        self.total_bytes = self.TOTAL_UPLOADS * max_bytes

    def keep(self, actor: Actor, contents: str, filename: str | None) -> str:
        """Check the upload (size, JSON) and keep it; the token that reads it back."""
        rule = may(actor, "propose")
        if rule is not None:
            raise BadInput(f"upload: {rule}; an uploaded plan is for proposing (preview "
                           "the planner's plans instead)")
        name = filename or "upload"
        raw = decode(contents, name, self.max_bytes)
        json_input.loads(raw, name, invalid="not a JSON file")  # named now, not at preview
        token = uuid.uuid4().hex
        header = json.dumps({"filename": name}).encode() + b"\n"
        with self._locked():
            purge(self.directory)
            self._make_room(_owner(actor), len(header) + len(raw))
            path = self._path(actor, token)
            partial = path.with_suffix(".partial")
            partial.write_bytes(header + raw)
            partial.rename(path)
        return token

    def read(self, actor: Actor, token: str | None) -> tuple[Any, str]:
        """(parsed plan, file name) of ``actor``'s upload, or (None, "upload") when it is
        gone (an hour old, or dropped for newer uploads) or is not theirs."""
        if not token or not self.TOKEN.fullmatch(token):
            return None, "upload"
        try:
            data = self._path(actor, token).read_bytes()
        except FileNotFoundError:
            return None, "upload"
        header, _, raw = data.partition(b"\n")
        name = json.loads(header)["filename"]
        return json_input.loads(raw, name, invalid="not a JSON file"), name

    def held(self, actor: Actor | None = None) -> int:
        """Bytes of uploads kept: ``actor``'s, or everyone's."""
        return sum(size for _, size, _ in self._files(actor and _owner(actor)))

    def _path(self, actor: Actor, token: str) -> Path:
        return self.directory / f"{PREFIX}{_owner(actor)}-{token}.json"

    def _files(self, owner: str | None = None) -> list[tuple[float, int, Path]]:
        """(mtime, bytes, path) of kept uploads, oldest first."""
        found = []
        for path in self.directory.glob(f"{PREFIX}{owner or ''}*.json"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            found.append((st.st_mtime, st.st_size, path))
        return sorted(found)

    def _make_room(self, owner: str, size: int) -> None:
        for files, limit in ((self._files(owner), self.user_bytes),
                             (self._files(), self.total_bytes)):
            held = sum(f[1] for f in files)
            for _, old_size, path in files:
                if held + size <= limit:
                    break
                path.unlink(missing_ok=True)
                held -= old_size

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time across the server's worker processes."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _owner(actor: Actor) -> str:
    """A file-name-safe tag of the user an upload belongs to."""
    return hashlib.sha256(actor.name.encode()).hexdigest()[:16]
