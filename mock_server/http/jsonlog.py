"""`--log-format json` writes every log record as one JSON object on one line, for a log pipeline.

A record's own fields go into the object beside `time`, `level`, `logger` and `message`. The request
observer and the banner give them as `extra={"event": {...}}`. JSON escapes every control character.
With ASCII output it also escapes every line separator and lone surrogate. So a value a client sent
can never start a line of its own, and a traceback is one string field.

What a record holds is masked where it is made. The request's line carries its path masked as the
journal masks it, and no header and no body.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

FORMATS = ("text", "json")


class JsonLines(logging.Formatter):
    """A `logging.Formatter` writing one JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        event = getattr(record, "event", None)
        if isinstance(event, dict):
            fields.update(event)
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        return json.dumps(fields, ensure_ascii=True, default=str, separators=(",", ":"))


def log_json_lines(level: str) -> None:
    """Every logger's records, uvicorn's included, as JSON lines on stdout, by the root's one handler."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonLines())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def uvicorn_log_options(log_format: str) -> dict[str, Any]:
    """uvicorn's logging options. Text keeps its own handlers. JSON has none, so its records go to the root's lines."""
    return {"log_config": None} if log_format == "json" else {}
