"""`--export-tests DIR`: a run's violations as one pytest file a backend team keeps in its own suite.

The file is self-contained. It needs pytest and httpx and imports nothing of this package. It holds the
source of `standalone.py`, which re-enacts a violation and states what each check's rule asks of the
answer. Then come the violations as data, then one test per violation, named by its id.

Credentials come from the variables `shop-contract` reads (SHOP_CONTRACT_API_KEY, SHOP_CONTRACT_TOKEN).
Each surface's base URL comes from its own variable, never from the report. As in `shop-contract
replay` (run/replay.py), a test sends the user's credentials only to a target the user names. Every
recorded request, setup steps of either surface included, is moved onto that target. A test fails,
sending nothing, when one request would go to another origin.

What the contract documents for a check (statuses, media types, response schemas) is read from the spec
at export time and written as data.

A target's answers and a report's text are hostile input. So every value goes into the file as a Python
literal: the `repr` of plain data, checked by parsing it back. A value is never written as code, a
comment or a docstring.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from contract_tests.check_names import RACE_TRIES
from contract_tests.outcome import files, standalone
from contract_tests.outcome.findings import Ledger, Violation
from contract_tests.outcome.fingerprint import violation_id
from contract_tests.outcome.reproduce import SECRET_FLAGS, NotACurl, recorded_request
from contract_tests.spec import JSON, Operation, Spec

FILE = "test_contract_violations.py"
TARGET_VARIABLES = {"backend": "SHOP_CONTRACT_BASE_URL", "gateway": "SHOP_CONTRACT_GATEWAY_URL"}
"""The variable naming each surface's base URL in an exported file."""
OWN_RULES = ("not_a_server_error", "write_echo", "round_trip", "patch_locality")
"""Checks whose rule standalone.broken states without data from the contract."""
CREDENTIAL_CHECKS = ("auth_matrix", "ignored_auth")
"""Checks whose failing request carries a credential of its own making. Reports mask it, so an exported
test cannot send it again."""
_ID = re.compile(r"^[0-9a-f]{8}$")
_SCHEMA_NOISE = ("description", "example", "examples", "title")
"""Schema keywords no rule reads, so they are left out of the file."""
_EXPECTED = re.compile(r"expected HTTP (\d{3}(?: or \d{3})*)|, not (\d{3})\b")
_STATUS_LINE = re.compile(r"^HTTP (\d{3})\b")

_RUNNER = """
def _credentials():
    api_key = os.environ.get(API_KEY_VARIABLE) or None
    token = os.environ.get(TOKEN_VARIABLE) or None
    if api_key is None and token is None:
        pytest.fail(f"set {API_KEY_VARIABLE} or {TOKEN_VARIABLE}: the target's credentials")
    return api_key, token


def _targets(surface):
    \"\"\"Each surface's base URL the environment names. The credentials go there only, never to a target this
    file records: it may come from anyone's run (a CI artifact of a fork's pull request).\"\"\"
    targets = {name: os.environ[variable] for name, variable in TARGET_VARIABLES.items() if os.environ.get(variable)}
    if surface not in targets:
        pytest.fail(
            f"set {TARGET_VARIABLES[surface]} to the {surface}'s base URL: the credentials are sent only to a "
            "target named in the environment, never to the one this file records"
        )
    return targets


def _judged(violation_id):
    violation = VIOLATIONS[violation_id]
    if violation["skip"]:
        pytest.skip(violation["skip"])
    credentials = _credentials()
    targets = _targets(violation["surface"])
    bases = {TARGETS[name]: url for name, url in targets.items() if name in TARGETS}
    steps = [{**step, "url": rebased(step["url"], bases)} for step in violation["steps"]]
    stray = elsewhere(steps, targets.values())
    if stray is not None:
        pytest.fail(
            f"a recorded request goes to {ascii(stray[:80])[1:-1]}, which is not the target being tested "
            f"({', '.join(TARGET_VARIABLES.values())}): refused, nothing sent"
        )
    if violation["expect"].get("racers"):
        _raced(violation, steps, targets[violation["surface"]], credentials)
        return
    with httpx.Client(timeout=TIMEOUT) as client:

        def send(method, url, headers, body):
            return client.request(method, url, headers=headers, content=body)

        exchanges = reenact(steps, COLLECTIONS, targets[violation["surface"]], credentials, send)
    problem = broken(violation["check"], violation["expect"], exchanges)
    assert problem is None, f"{violation['check']} on {violation['operation']}: {problem}"


def _raced(violation, steps, base, credentials):
    \"\"\"A race: up to its tries, its setup sent again and its racing requests at the same instant, each on
    its own thread and connection; a try counts when every one was sent before the first answer came. It
    stops at the first evidence, after up to 9 more tries for the frequency.\"\"\"
    expect, found, overlapped, first = violation["expect"], [], 0, None
    with httpx.Client(timeout=TIMEOUT) as client:

        def send(method, url, headers, body):
            return client.request(method, url, headers=headers, content=body)

        for _ in range(expect["tries"]):
            overlaps = []

            def together(requests):
                answers, overlap = at_once(requests, TIMEOUT)
                overlaps.append(overlap)
                return answers

            exchanges = reenact(steps, COLLECTIONS, base, credentials, send, expect["racers"], together)
            if not all(overlaps):
                continue
            overlapped += 1
            problem = broken(violation["check"], expect, exchanges)
            if problem is not None:
                found.append(problem)
                first = overlapped if first is None else first
            if first is not None and overlapped - first >= 9:
                break
    if not overlapped:
        pytest.skip("no overlap observed: the requests were never all sent before the first answer came")
    assert not found, (
        f"{violation['check']} on {violation['operation']}: {found[0]} "
        f"(broken in {len(found)} of {overlapped} overlapped tries)"
    )
"""


class ExportError(ValueError):
    """A value cannot be written as a plain Python literal (never expected of a valid report)."""


def literal(value: Any) -> str:
    """`value` as Python source that evaluates to it and can do nothing else: plain data only."""
    _plain(value)
    text = repr(value)
    if ast.literal_eval(text) != value:
        raise ExportError("a value does not read back as itself")
    return text


def _plain(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ExportError("a number that is not finite")
    if value is None or isinstance(value, str | bool | int | float):
        return
    if isinstance(value, list | tuple):
        for item in value:
            _plain(item)
        return
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        for item in value.values():
            _plain(item)
        return
    raise ExportError(f"not plain data: {type(value).__name__}")


def _quiet(schema: Any) -> Any:
    """A response schema without what no rule reads (and what YAML may have made other than JSON)."""
    if isinstance(schema, dict):
        return {key: _quiet(value) for key, value in schema.items() if key not in _SCHEMA_NOISE}
    if isinstance(schema, list):
        return [_quiet(item) for item in schema]
    return schema


def expectations(spec: Spec, op: Operation | None, violation: Violation) -> JSON:
    """What the exported test asserts beyond the answer. That is the contract's documented statuses, media
    types and schemas for `op`. For a check with no rule of its own in standalone.py, it is what the run
    recorded."""
    responses: dict[str, Any] = op.definition.get("responses", {}) if op is not None else {}
    check = violation.check
    if check == "status_code_conformance":
        return {"statuses": sorted(responses)}
    if check == "content_type_conformance":
        return {"media_types": {status: sorted(r.get("content", {})) for status, r in responses.items()}}
    if check == "response_schema_conformance":
        schemas = {
            status: {media: _quiet(content.get("schema", {})) for media, content in r.get("content", {}).items()}
            for status, r in responses.items()
        }
        return {"schemas": schemas}
    if check == "item_identity" and op is not None:
        collection = spec.collection_of(op)
        return {"identifier": collection.identifier if collection is not None else None}
    if check == "list_scoping" and op is not None and op.path_parameters:
        return {"owner": op.path_parameters[-1]}
    if check in OWN_RULES:
        return {}
    if standalone.racers(violation.rule):
        return {"racers": standalone.racers(violation.rule), "tries": RACE_TRIES}
    named = _EXPECTED.search(violation.rule)
    if named is not None:
        return {"expected_statuses": [int(code) for code in (named.group(1) or named.group(2)).split(" or ")]}
    status = _STATUS_LINE.match(violation.response)
    if status is not None and int(status.group(1)) >= 400:
        return {"not_status": int(status.group(1)), "rule": violation.rule}
    return {}


def skipped(violation: Violation, expect: JSON) -> str:
    """Why an exported test cannot judge `violation` ("" when it can)."""
    if violation.check in CREDENTIAL_CHECKS:
        return "the credential it tested is masked in reports: replay it with `shop-contract replay`"
    if expect or violation.check in OWN_RULES:
        return ""
    found = f"the run found: {violation.rule}"
    return f"no stand-alone rule for {violation.check}: replay it with `shop-contract replay` ({found})"


def collections(spec: Spec) -> list[JSON]:
    """Each collection's create path, item path, identifier and its schema. Fresh identifiers need them."""
    return [
        {
            "create": collection.create.path,
            "item": collection.item_ops["get"].path,
            "identifier": collection.identifier,
            "schema": _quiet(collection.request_schema["properties"][collection.identifier]),
        }
        for collection in spec.collections
        if "get" in collection.item_ops
    ]


def _entry(spec: Spec, violation: Violation) -> JSON:
    op = spec.operations.get(violation.operation)
    entry: JSON = {
        "check": violation.check,
        "surface": violation.surface,
        "operation": violation.operation,
        "rule": violation.rule,
        "steps": [],
        "expect": expectations(spec, op, violation),
    }
    entry["skip"] = skipped(violation, entry["expect"])
    if entry["skip"]:
        return entry
    try:
        entry["steps"] = [recorded_request(curl) for curl in (*violation.setup, violation.curl)]
    except NotACurl as exc:
        entry["skip"] = f"its requests cannot be sent again: {exc}"
    return entry


def _masked(value: Any, secrets: Sequence[str]) -> Any:
    """`value` with every secret the run sent replaced. The requests already show credentials masked."""
    if isinstance(value, str):
        for secret in (s for s in secrets if len(s) >= 4):
            value = value.replace(secret, standalone.MASKED)
        return value
    if isinstance(value, list):
        return [_masked(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: _masked(item, secrets) for key, item in value.items()}
    return value


def source(violations: Sequence[Violation], targets: Mapping[str, str], spec: Spec, secrets: Sequence[str] = ()) -> str:
    """The pytest file's text."""
    entries: dict[str, JSON] = {}
    for violation in violations:
        name = violation_id(violation)
        if not _ID.match(name):
            raise ExportError("a violation id that is not 8 hexadecimal characters")
        entries.setdefault(name, _masked(_entry(spec, violation), secrets))
    library = resources.files("contract_tests.outcome").joinpath("standalone.py").read_text(encoding="utf-8")
    library = library.replace("from __future__ import annotations\n", "", 1)
    data = [
        f"TARGETS = {literal(dict(targets))}",
        f"TARGET_VARIABLES = {literal(TARGET_VARIABLES)}",
        f"API_KEY_VARIABLE = {literal(SECRET_FLAGS['api_key'][1])}",
        f"TOKEN_VARIABLE = {literal(SECRET_FLAGS['token'][1])}",
        "TIMEOUT = 30.0",
        f"COLLECTIONS = {literal(collections(spec))}",
        f"VIOLATIONS = {literal(entries)}",
    ]
    tests = [f"def test_violation_{name}():\n    _judged({literal(name)})\n" for name in entries]
    header = (
        '"""Contract violations found by shop-contract, as pytest tests (generated: do not edit).\n\n'
        "Each test sends a violation's setup requests and its failing request again, then asserts the rule\n"
        "its check states. Set SHOP_CONTRACT_BASE_URL (and SHOP_CONTRACT_GATEWAY_URL): the target to test, the\n"
        "only one the credentials (SHOP_CONTRACT_API_KEY or SHOP_CONTRACT_TOKEN) are sent to; a request recorded\n"
        'on another origin fails its test, sending nothing. Needs pytest and httpx."""\n\n'
        "from __future__ import annotations\n\nimport os\n\nimport pytest\n\n"
    )
    return "\n\n".join([header + library.rstrip(), *data, _RUNNER.strip(), *tests]) + "\n"


def write_run(ledger: Ledger, directory: Path, spec: Path | None) -> Path:
    """A run's (or a merge's) violations written into `directory`, judged against the contract at `spec`."""
    return write(ledger.violations, ledger.run.targets, Spec.load(spec), directory, ledger.secrets)


def write(
    violations: Sequence[Violation],
    targets: Mapping[str, str],
    spec: Spec,
    directory: Path,
    secrets: Sequence[str] = (),
) -> Path:
    """Write the pytest file into `directory`, made if missing, and answer its path. The file is written
    whole or not at all (outcome/files.py)."""
    text = source(violations, targets, spec, secrets)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE
    files.write(path, text.encode("utf-8"))
    return path
