"""How to repeat what a report shows: the command of the whole run, and a request as an httpx script.

The command never holds a credential. Each is read from the variable `shop-contract` reads it from
(arguments.SECRET_VARIABLES).

A request's curl becomes a short Python script with httpx. Schemathesis writes the curl as
`curl -X M -H 'h: v' -d 'body' URL`, with credentials already masked. A curl that is not of that
shape is said to be so, never guessed at. So is one that uses the shell's `$'...'` quoting for
control characters.

Schemathesis quotes a curl for the shell `$SHELL` names. It writes fish's escapes for fish. For a
shell it does not know, it writes bash's and appends warnings, and CI runners often set no shell. So
a run writes every curl for bash (`for_bash`). A violation's curl, and so its id, is then the same on
every machine, and reads back here.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterator
from typing import Any

from contract_tests.options import Options

SECRET_FLAGS = {
    "api_key": ("--api-key", "SHOP_CONTRACT_API_KEY"),
    "token": ("--token", "SHOP_CONTRACT_TOKEN"),
    "client_secret": ("--client-secret", "SHOP_CONTRACT_CLIENT_SECRET"),
}


def command(options: Options) -> str:
    """`shop-contract ...` repeating the run `options` describe. The same seed gives the same cases."""
    words = ["shop-contract"]
    for flag, value in (
        ("--base-url", options.base_url),
        ("--gateway-url", options.gateway_url),
        ("--token-url", options.token_url),
        ("--client-id", options.client_id),
    ):
        if value is not None:
            words += [flag, shlex.quote(value)]
    for name, (flag, variable) in SECRET_FLAGS.items():
        if getattr(options, name) is not None:
            words += [flag, f'"${variable}"']
    words += ["--seed", str(options.seed_value), "--profile", options.profile]
    if options.max_examples is not None:
        words += ["--max-examples", str(options.max_examples)]
    words += [word for name in options.include for word in ("--include", shlex.quote(name))]
    words += ["--strict"] if options.strict else []
    words += [word for name in options.strict_checks for word in ("--strict-check", name)]
    words += ["--no-domain"] if not options.domain else []
    words += ["--no-conformance"] if not options.conformance else []
    words += ["--checks", *options.checks] if options.checks else []
    words += ["--exclude-checks", *options.exclude_checks] if options.exclude_checks else []
    words += ["--shard", str(options.shard)] if options.shard is not None else []
    words += ["--max-time", f"{options.max_time:g}"] if options.max_time is not None else []
    if options.consumer is not None:  # A consumer contract's check names its file and the spec it is read against.
        words += ["--consumer", shlex.quote(str(options.consumer))]
        words += ["--spec", shlex.quote(str(options.spec))] if options.spec is not None else []
    return " ".join(words)


REPRODUCTION_SHELL = "/bin/bash"
"""The shell every reproduction is written for. Bash's `$'...'` quoting also reads in zsh."""


@contextlib.contextmanager
def for_bash() -> Iterator[None]:
    """Inside the block, Schemathesis writes each curl for bash, whatever `$SHELL` the run was started from."""
    started_from = os.environ.get("SHELL")
    os.environ["SHELL"] = REPRODUCTION_SHELL
    try:
        yield
    finally:
        if started_from is None:
            os.environ.pop("SHELL", None)
        else:
            os.environ["SHELL"] = started_from


def unsharded(sharded: str) -> str:
    """A shard's command without its `--shard K/N`. That is the whole run the shards split."""
    words = sharded.split(" ")
    if "--shard" in words:
        at = words.index("--shard")
        del words[at : at + 2]
    return " ".join(words)


MASKED = "[Filtered]"
"""How Schemathesis, and judge/domain/http.py, show a credential header in a curl command."""


class NotACurl(ValueError):
    """The text is not a curl command of the shape Schemathesis writes."""


TRUNCATED = " <...truncated"
"""How Schemathesis marks a body cut for display in a curl. Such a request cannot be sent again."""
WARNINGS = "\n\n\N{WARNING SIGN}"
"""Where Schemathesis appends its warnings to a curl, for a shell it does not know. The command is before."""
_ANSI_C = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "e": "\x1b"}


def _ansi_c(text: str, start: int) -> tuple[str, int]:
    """The word `$'...'` quotes from `start` (just after `$'`), and the index after its closing quote.

    `\\xHH` runs are UTF-8 bytes, as Schemathesis writes them."""
    out, pending, index = [], bytearray(), start
    while index < len(text) and text[index] != "'":
        char = text[index]
        if (
            char == "\\"
            and text[index + 1 : index + 2] == "x"
            and re.fullmatch(r"[0-9a-fA-F]{2}", text[index + 2 : index + 4])
        ):
            pending.append(int(text[index + 2 : index + 4], 16))
            index += 4
            continue
        if pending:
            out.append(pending.decode("utf-8", "surrogateescape"))
            pending.clear()
        if char == "\\" and index + 1 < len(text):
            escaped = text[index + 1]
            if escaped not in _ANSI_C:
                raise NotACurl(f"an escape it does not know: \\{escaped}")
            out.append(_ANSI_C[escaped])
            index += 2
        else:
            out.append(char)
            index += 1
    if index >= len(text):
        raise NotACurl("a $'...' quote is not closed")
    if pending:
        out.append(pending.decode("utf-8", "surrogateescape"))
    return "".join(out), index + 1


def words(curl: str) -> list[str]:
    """The shell words of `curl`, also with bash's `$'...'` quoting, which Schemathesis uses for control characters."""
    result: list[str] = []
    index, current, started = 0, [], False
    while index < len(curl):
        char = curl[index]
        if curl.startswith("$'", index):
            text, index = _ansi_c(curl, index + 2)
            current.append(text)
            started = True
        elif char in " \t\n":
            if started:
                result.append("".join(current))
            current, started = [], False
            index += 1
        elif char == "'":
            end = curl.find("'", index + 1)
            if end < 0:
                raise NotACurl("a quote is not closed")
            current.append(curl[index + 1 : end])
            started, index = True, end + 1
        elif char == '"':
            found = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL).match(curl, index)
            if found is None:
                raise NotACurl("a quote is not closed")
            current.append(re.sub(r'\\([$`"\\\n])', r"\1", found.group(1)))
            started, index = True, found.end()
        else:
            end = index
            while end < len(curl) and curl[end] not in " \t\n'\"" and not curl.startswith("$'", end):
                end += 1
            try:
                current.append("".join(shlex.split(curl[index:end])) if curl[index:end].strip() else "")
            except ValueError as exc:
                raise NotACurl(str(exc)) from None
            started, index = True, end
    if started:
        result.append("".join(current))
    return result


def parse_curl(curl: str, *, ansi_c: bool = False) -> tuple[str, str, list[tuple[str, str]], str | None]:
    """(method, url, headers, body) of a curl command as Schemathesis writes it.

    With `ansi_c`, bash's `$'...'` quoting is read too. It is refused by default, because a script shown
    to a person should not guess at it."""
    curl = curl.split(WARNINGS, 1)[0]
    if "$'" in curl and not ansi_c:
        raise NotACurl("it quotes control characters for the shell ($'...')")
    if TRUNCATED in curl:
        raise NotACurl("its body was cut for display")
    split = words(curl)
    if not split or split[0] != "curl":
        raise NotACurl("it does not start with curl")
    method, url, body = "GET", "", None
    headers: list[tuple[str, str]] = []
    rest = iter(split[1:])
    for word in rest:
        if word in ("-X", "-H", "-d"):
            value = next(rest, None)
            if value is None:
                raise NotACurl(f"{word} has no value")
            if word == "-X":
                method = value
            elif word == "-H":
                name, _, header = value.partition(":")
                headers.append((name.strip().rstrip(";"), header.strip()))
            else:
                body = value
        elif word == "--insecure":
            continue
        elif word.startswith("-") or url:
            raise NotACurl(f"unexpected {word!r}")
        else:
            url = word
    if not url:
        raise NotACurl("it names no URL")
    return method, url, headers, body


def recorded_request(curl: str) -> dict[str, Any]:
    """The request a report's curl records, as data (`Request` in contract_tests/outcome/standalone.py)."""
    method, url, headers, body = parse_curl(curl, ansi_c=True)
    return {"method": method.upper(), "url": url, "headers": [[name, value] for name, value in headers], "body": body}


def httpx_script(curl: str) -> str:
    """A small Python script sending the request `curl` sends, with httpx, and printing the answer."""
    try:
        method, url, headers, body = parse_curl(curl)
    except NotACurl as exc:
        return f"# This request cannot be shown as a script ({exc}): use its curl command."
    masked = any(MASKED in value for _, value in headers)
    lines = [
        *(["# [Filtered]: a credential the suite sent, masked in reports: put yours in its place."] if masked else []),
        "import httpx",
        "",
        "response = httpx.request(",
        f"    {method!r},",
        f"    {url!r},",
        f"    headers={dict(headers)!r},",
    ]
    if body is not None:
        lines.append(f"    content={body!r}.encode(),")
    lines += [")", "print(response.status_code, response.headers.get('content-type'))", "print(response.text)"]
    return "\n".join(lines)
