"""Files the operator uploads in a browser (a Dash upload's data URL) as the services read
them: a reassignment plan's JSON, or a workload's text written where the loaders read."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from backend.errors import BadInput


def text(contents: str, filename: str | None) -> str:
    """A ``data:...;base64,...`` URL -> its UTF-8 text; BadInput naming the file."""
    _, _, data = contents.partition(",")
    try:
        return base64.b64decode(data).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise BadInput(f"{filename or 'upload'}: not a UTF-8 text file") from None


def json_object(contents: str | None, filename: str | None) -> dict | None:
    """An uploaded JSON file (a reassignment plan) -> the parsed object; None if none."""
    if not contents:
        return None
    try:
        return json.loads(text(contents, filename))
    except (ValueError, BadInput):
        raise BadInput(f"{filename or 'upload'}: not a JSON file") from None


def save_text(contents: str, filename: str | None, directory: str, suffix: str) -> str:
    """An uploaded text file written under ``directory`` (same content, same file), so the
    file loaders read it and report its line numbers."""
    body = text(contents, filename)
    Path(directory).mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(body.encode("utf-8")).hexdigest()[:16]
    path = Path(directory) / f"upload-{digest}{suffix}"
    path.write_text(body, encoding="utf-8")
    return str(path)
