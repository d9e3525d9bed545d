"""A consumer contract replayed on a backend: does it honour what the front end relies on?

Each interaction's example is sent again as recorded. That is its query, its media type, its body
fields (empty ones included) and the security scheme it used. Only the identifiers are replaced:

- The owner of a sub-list is an item the target serves, or else one the run makes.
- An item to read or write is made for the interaction.
- A new item gets a fresh identifier. When the mock answered 409, the consumer met a conflict, so
  it gets an existing one instead.
- An example the mock answered 404 names an identifier that nothing has.

Made and fresh identifiers keep as much of the recorded value as fits, with the run's mark appended.
So an identifier's shape that the consumer relies on, such as a dot or a space, is tested too. The
values of `x-external-reference` fields are ones the target serves (`known.external`).

Then three checks are judged under the interaction's name:

- `consumer_status` asks for the same status class as the mock's answer. A 2xx on the mock and
  anything else on the backend is "the backend refuses what this consumer sends", with both answers.
- `consumer_response` asks that the answer conform to the spec, by Schemathesis' own response
  validation.
- `consumer_fields` asks that a 2xx answer carry every field the consumer received. Error bodies are
  only promised the `Problem` shape's optional fields, so theirs are not required. A field under a
  list that the backend answers empty cannot show. It is listed as not exercised, never passed
  silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import requests
import schemathesis

from contract_tests.client.bodies import declared_charset, text_codec
from contract_tests.judge.consumer.document import Contract, Interaction, empty_lists, field_paths
from contract_tests.judge.discovery import first_page, make
from contract_tests.judge.domain.http import Abandoned, Exchange, Session
from contract_tests.judge.known import Known
from contract_tests.outcome.findings import InteractionVerdict, Ledger, Violation
from contract_tests.spec import Collection, Operation, Spec

CREDENTIAL_OF = {"apiKey": "api_key", "http": "bearer"}
"""A security scheme's type -> the name of the credential a `Surface` accepts for it."""
FAILURE_SHOWN = 600  # The characters of Schemathesis' failure message kept in a rule.


class NotReplayed(Exception):
    """The interaction cannot be replayed on this target. The message says why, for the report."""


def verify(
    spec: Spec,
    sessions: dict[str, Session],
    contract: Contract,
    known: Known,
    ledger: Ledger,
    progress: Callable[[str], None],
) -> None:
    """Replay every interaction of `contract`, and write the verdicts to `ledger` as the module says.

    `sessions` holds one session per surface of the target, by name."""
    run = ledger.consumer
    assert run is not None
    schema = schemathesis.openapi.from_dict(spec.raw)
    for interaction in contract.interactions:
        progress(f"[consumer] {interaction.name} {interaction.summary()}")
        run.interactions.append(_one(spec, schema, sessions, known, ledger, interaction))


def _one(
    spec: Spec, schema: Any, sessions: dict[str, Session], known: Known, ledger: Ledger, interaction: Interaction
) -> InteractionVerdict:
    try:
        op = _operation(spec, interaction)
        session = sessions.get(interaction.surface)
        if session is None:
            raise NotReplayed(f"the target has no {interaction.surface} (give its URL)")
        exchange, setup = _replay(spec, session, known, op, interaction)
    except (NotReplayed, Abandoned) as exc:
        reason = f"not replayed: {exc}"
        ledger.skipped(interaction.surface, interaction.name, "consumer_status", reason)
        return interaction.judged(None, "not exercised", (reason,))
    problems = _judge(schema, ledger, interaction, exchange, setup)
    return interaction.judged(exchange.status, "broken" if problems else "ok", tuple(problems))


def _operation(spec: Spec, interaction: Interaction) -> Operation:
    op = spec.operations.get(interaction.operation)
    method, path = interaction.raw["method"], interaction.raw["path"]
    if op is None or (op.method.upper(), op.path) != (method, path):
        raise NotReplayed(
            f"the spec has no {interaction.operation} at {method} {path} (check the revision: --spec alone)"
        )
    return op


def _collection(spec: Spec, identifier: str) -> Collection:
    found = next((c for c in spec.collections if c.identifier == identifier), None)
    if found is None:
        raise NotReplayed(f"no collection of the spec is identified by {identifier!r}")
    return found


def _identifier_schema(collection: Collection) -> dict[str, Any]:
    prop: dict[str, Any] = collection.request_schema["properties"][collection.identifier]
    return prop


def _existing(spec: Spec, session: Session, known: Known, collection: Collection) -> Any:
    """An item of `collection` the target serves, or one the run makes when it serves none."""
    if collection.identifier in known.references:
        return known.references[collection.identifier]
    items = first_page(session, collection)
    if items and collection.identifier in items[0]:
        return items[0][collection.identifier]
    return _made(spec, session, known, collection)[0]


def _made(spec: Spec, session: Session, known: Known, collection: Collection, stem: Any = None) -> tuple[Any, str]:
    """A new item of `collection` for this interaction alone, and the request that made it (curl).

    The item is removed at the end of the run if it is still there. Its identifier is shaped like the
    recorded one (`stem`), so a dot in it stays a dot."""
    before, shared = len(known.made), dict(known.references)
    make(spec, session, known, collection, stem)
    known.references = shared  # The item is the interaction's own, which may delete it, so others never read it.
    if len(known.made) == before:
        raise NotReplayed(f"the {collection.identifier} it needs could not be created on the target")
    return known.made[-1][1], known.setup[-1]


def _replay(
    spec: Spec, session: Session, known: Known, op: Operation, interaction: Interaction
) -> tuple[Exchange, list[str]]:
    example = interaction.example
    missing = int(example["status"]) == 404
    setup: list[str] = []
    path: dict[str, Any] = {}
    for name, recorded in example["path"].items():
        collection = _collection(spec, name)
        if missing:
            path[name] = known.identities.fresh(_identifier_schema(collection), recorded)
        elif spec.is_list(op):  # List the items of an owner the target serves, because a new one has none.
            path[name] = _existing(spec, session, known, collection)
        else:
            path[name], created = _made(spec, session, known, collection, recorded)
            setup.append(created)
    headers = _credentials(spec, session, op, interaction)
    content = _content(spec, session, known, op, interaction, path)
    if "content" in content and interaction.media_type is not None:  # Raw content keeps the consumer's type.
        headers["Content-Type"] = interaction.media_type
    query = dict(example["query"]) or None
    exchange = session.call(op, path, query=query, headers=headers, **content)
    return exchange, setup


def _credentials(spec: Spec, session: Session, op: Operation, interaction: Interaction) -> dict[str, str]:
    """The target's credentials for the schemes the consumer used, none when it used none."""
    schemes = spec.raw.get("components", {}).get("securitySchemes", {})
    headers: dict[str, str] = {}
    for name in interaction.request["auth"]:
        kind = CREDENTIAL_OF.get(str(schemes.get(name, {}).get("type")))
        given = session.surface.accepted.get(kind or "")
        if given is None and kind == "api_key":  # On the gateway, send the run's API key, which it must refuse.
            given = session.surface.refused.get("api_key_alone")
        if given is None:
            raise NotReplayed(f"the run has no credential for {name} on the {session.surface.name}")
        headers.update(given)
    return headers


def _content(
    spec: Spec, session: Session, known: Known, op: Operation, interaction: Interaction, path: dict[str, Any]
) -> dict[str, Any]:
    """The body as the consumer sent it, with the target's identifiers and external references.

    It is given as `Session.call` takes it: `content`, `json`, `data` or `files`. The caller sets the
    Content-Type of raw `content`."""
    media_type, body = interaction.media_type, interaction.example["body"]
    if media_type is None:
        return {}
    if not isinstance(body, dict):
        return {"content": body if isinstance(body, str) else json.dumps(body)}
    body = dict(body)
    own = spec.collection_of(op)
    for pointer, kind in interaction.example["references"].items():
        place, _, name = pointer.removeprefix("/").partition("/")
        if place != "body" or name not in body:
            continue
        if name in path:
            body[name] = path[name]
        elif own is not None and name == own.identifier and int(interaction.example["status"]) == 409:
            body[name] = _existing(spec, session, known, own)  # The consumer met a conflict, so use one that exists.
        elif own is not None and name == own.identifier:
            body[name] = known.identities.fresh(_identifier_schema(own), body[name])
        else:
            body[name] = _existing(spec, session, known, _collection(spec, kind))
    schema = op.request_schema or {}
    for name in spec.external_references(schema):
        if body.get(name) not in (None, ""):
            body[name] = known.external_value(name, schema["properties"][name])
    if media_type == "application/json":
        return {"json": body}
    if media_type == "application/x-www-form-urlencoded":
        return {"data": {name: _text(value) for name, value in body.items()}}
    if media_type == "multipart/form-data":
        return {"files": {name: (None, _text(value)) for name, value in body.items()}}
    return {"content": json.dumps(body)}


def _text(value: Any) -> str:
    """A value as a form carries it. Null is the empty value, and a number is its decimal text."""
    return "" if value is None else str(value)


def _judge(schema: Any, ledger: Ledger, interaction: Interaction, exchange: Exchange, setup: list[str]) -> list[str]:
    """Record the three verdicts, and return the rules broken. The list is empty when all held."""
    surface, name = interaction.surface, interaction.name
    recorded, status = interaction.recorded_status, exchange.status
    received = interaction.fields_received(recorded)
    broken: list[tuple[str, str]] = []
    mock_answer = f"the mock answered HTTP {recorded}" + (f" with {', '.join(received)}" if received else "")
    if recorded // 100 != status // 100:
        if recorded // 100 == 2:
            rule = f"the backend refuses what this consumer sends: {mock_answer}; the backend HTTP {status}"
        else:
            rule = f"the backend answers HTTP {status} where {mock_answer} to this consumer"
        broken.append(("consumer_status", rule))
    failure = _nonconforming(schema, interaction.operation, exchange)
    if failure is not None:
        broken.append(("consumer_response", f"the answer conforms to the spec: {failure}"))
    if recorded // 100 == 2 and status // 100 == 2:
        answer = exchange.json()
        seen, empty = field_paths(answer), empty_lists(answer)
        unseen = [field for field in received if field not in seen]
        hidden = [field for field in unseen if any(field.startswith(prefix) for prefix in empty)]
        lacking = [field for field in unseen if field not in hidden]
        if lacking:
            broken.append(
                (
                    "consumer_fields",
                    f"the answer carries every field this consumer received; it lacks {', '.join(lacking)}",
                )
            )
        if hidden:
            ledger.skipped(
                surface, name, "consumer_fields", f"under a list the backend answered empty: {', '.join(hidden)}"
            )
    steps = tuple(setup)
    failed = {check for check, _ in broken}
    for check, rule in broken:
        ledger.violated(Violation(check, surface, name, rule, exchange.curl(), exchange.shown(), steps))
    for check in ("consumer_status", "consumer_response", "consumer_fields"):
        if check not in failed and (check != "consumer_fields" or status // 100 == 2 == recorded // 100):
            ledger.passed(surface, name, check)
    return [rule for _, rule in broken]


def _nonconforming(schema: Any, operation_id: str, exchange: Exchange) -> str | None:
    """Schemathesis' verdict on the answer against the spec, or None when it conforms."""
    answer = exchange.response
    request = exchange.request
    sent = requests.Request(request.method, str(request.url), headers=dict(request.headers), data=request.content)
    # The bounded client reads the body itself, so httpx never measured `elapsed`. It is not judged here.
    judged = schemathesis.Response(
        status_code=answer.status_code,
        headers={name: [value] for name, value in answer.headers.items()},
        content=answer.content,
        request=sent.prepare(),
        elapsed=0.0,
        message=answer.reason_phrase,
        encoding=text_codec(declared_charset(answer.headers.get("content-type"))),
        http_version=answer.http_version,
        verify=True,
    )
    try:
        schema.find_operation_by_id(operation_id).validate_response(judged)
    except (AssertionError, ExceptionGroup) as failure:
        text = " ".join(str(failure).split())
        return text if len(text) <= FAILURE_SHOWN else text[:FAILURE_SHOWN] + " …"
    return None
