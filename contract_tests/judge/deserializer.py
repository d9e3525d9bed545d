"""How Schemathesis reads a JSON answer in this suite. It reads it as its own deserializer does, except
that a body nested past Python's recursion limit is malformed JSON, as it is for the suite's other
readers.

json.loads raises RecursionError on such a body, which is no ValueError. Schemathesis' response check
would still judge it. But the engine's other readers of an answer let it escape, and the operation
ended as an error with a traceback instead of a `response_schema_conformance` violation.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis

from contract_tests.client.bodies import lenient_json, lenient_text


@schemathesis.deserializer("application/json")
def json_body(context: schemathesis.DeserializationContext, response: schemathesis.Response) -> Any:
    content_type = next(iter(response.headers.get("content-type", [])), None)
    try:
        return lenient_json(response.content, content_type)
    except RecursionError:
        raise json.JSONDecodeError(
            "nested too deeply to parse", lenient_text(response.content, content_type), 0
        ) from None
