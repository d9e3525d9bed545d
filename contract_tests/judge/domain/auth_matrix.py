"""`auth_matrix`: for every operation, each bad credential is refused and each good one works alone.

A refusal is 401 or 403, and a 401 carries its `WWW-Authenticate` challenge. These are refused.
- No credentials, and a wrong API key.
- Malformed, garbage, `alg: none`, wrongly signed, expired and HS256-confused tokens.
- On the gateway, also the API key alone.

The API key alone and the bearer token alone, where given, are accepted. Accepted means any answer
but 401 and 403.

Near misses of the credentials accepted are tried in every run, on every item operation (read,
replace, patch, delete). Each is refused.
- The API key one character off, with the last one changed, one more or one less.
- The API key with its letter case swapped, with a space inside, or with a character percent-encoded.
- The token with one claim changed or one character of its signature changed, and one character short.

White space around a header value is not a near miss, because HTTP strips it (RFC 9110, section 5.5).

The requests cannot change anything even where auth is broken. Items are addressed by identifiers that
do not exist, and write bodies are empty objects, which no correct service accepts.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session
from contract_tests.spec import Operation

CHECK = "auth_matrix"
REFUSALS = (401, 403)


def harmless_call(ctx: Context, op: Operation) -> tuple[dict[str, Any], dict[str, Any]]:
    """Path parameters of missing items, and an empty body for operations that take one."""
    params = {}
    for name in op.path_parameters:
        collection = next(c for c in ctx.spec.collections if c.identifier == name)
        params[name] = ctx.missing_identifier(collection)
    content: dict[str, Any] = {"json": {}} if op.request_schema is not None else {}
    return params, content


def other_character(char: str) -> str:
    return "B" if char == "A" else "A"


def key_near_misses(key: str) -> dict[str, str]:
    """API keys a careless comparison takes for `key` (by prefix, ignoring case, decoding it), by name.

    Only keys a client can send: a one-character key has no inside, and `k ` is no header value.
    """
    misses = {
        "api_key_last_character_changed": key[:-1] + other_character(key[-1]),
        "api_key_one_character_more": key + key[-1],
        "api_key_one_character_less": key[:-1],
        "api_key_case_swapped": key.swapcase(),
        "api_key_space_inside": f"{key[:1]} {key[1:]}",
        "api_key_percent_encoded": f"%{ord(key[0]):02X}{key[1:]}",
    }
    return {name: miss for name, miss in misses.items() if miss and miss != key and miss == miss.strip()}


def token_near_misses(token: str) -> dict[str, str]:
    """Tokens valid in all but one claim or one character of their signature, or one character short."""
    parts = token.split(".")
    misses = {"token_one_character_less": token[:-1]}
    if len(parts) != 3 or len(parts[2]) < 2:
        return misses
    header, payload, signature = parts
    middle = len(signature) // 2
    changed = signature[:middle] + other_character(signature[middle]) + signature[middle + 1 :]
    misses["token_signature_changed"] = f"{header}.{payload}.{changed}"
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        return misses
    if isinstance(claims, dict) and claims:
        claim = "sub" if "sub" in claims else next(iter(claims))
        claims[claim] = f"{claims[claim]}x"
        encoded = base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode()).rstrip(b"=").decode()
        misses[f"token_claim_{claim}_changed"] = f"{header}.{encoded}.{signature}"
    return misses


def near_misses(accepted: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Each credential of `accepted` a character or a claim off, by name, as headers to send alone."""
    misses: dict[str, dict[str, str]] = {}
    for headers in accepted.values():
        for header, value in headers.items():
            if header.lower() == "x-api-key":
                misses.update({name: {header: miss} for name, miss in key_near_misses(value).items()})
            elif header.lower() == "authorization" and value.startswith("Bearer "):
                tokens = token_near_misses(value.removeprefix("Bearer "))
                misses.update({name: {header: f"Bearer {miss}"} for name, miss in tokens.items()})
    return misses


def run(ctx: Context, session: Session) -> None:
    surface = session.surface
    current = {
        name: session.keyring.current(headers) if session.keyring else headers
        for name, headers in surface.accepted.items()
    }
    missed = near_misses(current)
    item_ops = {op.id for collection in ctx.spec.collections for op in collection.item_ops.values()}
    for op_id in surface.operations:
        op = ctx.spec.operations[op_id]
        if not ctx.selected(op) or not ctx.operation_is_mine(op):
            continue
        params, content = harmless_call(ctx, op)
        refused = {**surface.refused, **missed} if op_id in item_ops else surface.refused
        for name, headers in refused.items():
            exchange = session.call(op, params, headers=headers, **content)
            broken = None if exchange.status in REFUSALS else f"{name}: answered {exchange.status}, not 401 or 403"
            if exchange.status == 401 and "www-authenticate" not in exchange.response.headers:
                broken = f"{name}: answered 401 without `WWW-Authenticate` (a 401 carries its challenge)"
            session.judge(CHECK, op, exchange, broken)
        for name, headers in surface.accepted.items():
            exchange = session.call(op, params, headers=headers, **content)
            broken = f"{name} alone was refused ({exchange.status})" if exchange.status in REFUSALS else None
            session.judge(CHECK, op, exchange, broken)
