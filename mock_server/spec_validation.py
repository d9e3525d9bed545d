"""Connexion checks a spec against the OpenAPI 3 schema once per document, not once per API it builds.

Connexion 3.3 validates the whole document in every `Specification` it makes: twice per mock (the
backend and the gateway) and again in every app a test or a benchmark builds, about half a second
each on these machines, most of a mock's start-up. The verdict depends on the document alone, so
`validate_each_document_once` makes Connexion remember the documents that passed (by a digest of
their canonical JSON) and validate only new ones. A document that fails is never remembered: it
fails, with Connexion's own error, every time. Like mock_server.hotpath, this hooks into a private
part of Connexion, which is why pyproject.toml keeps Connexion to the 3.3 series.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from connexion.spec import OpenAPISpecification

_valid: set[bytes] = set()
_lock = threading.Lock()


def digest(document: Any) -> bytes:
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).digest()


def validate_each_document_once() -> None:
    """Install the memo on Connexion's OpenAPI 3 specification (idempotent)."""
    if getattr(OpenAPISpecification._validate_spec, "memoised", False):
        return
    validate = OpenAPISpecification._validate_spec

    def validate_once(cls: type[OpenAPISpecification], spec: Any) -> None:
        key = digest(spec)
        with _lock:
            if key in _valid:
                return
        validate.__func__(cls, spec)
        with _lock:
            _valid.add(key)

    validate_once.memoised = True  # type: ignore[attr-defined]
    OpenAPISpecification._validate_spec = classmethod(validate_once)
