"""The dashboard's own routes. They serve its page, the steering help read from the spec, and the
live stream (`stream.Broadcast`). The page is three static files shipped in `static/`.

The page is plain HTML, CSS and JavaScript, with no library and no build step. It renders every value
a peer sent as text (`textContent`), never as markup. Its Content-Security-Policy lets it load and
call nothing but this origin.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from mock_server.control.admin import PREFIX
from mock_server.control.dashboard.stream import Broadcast
from mock_server.control.journal.base import Journal
from mock_server.spec.operations import Operation

UI = f"{PREFIX}/ui/"
FILES = {  # path -> (file in static/, media type).
    UI: ("index.html", "text/html; charset=utf-8"),
    f"{UI}dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
    f"{UI}dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
}
SHELL = frozenset(FILES)  # What the admin guard serves without the token. It is files, never data.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
Endpoint = Callable[[Request], Any]


def steering_help(operation: Operation) -> dict[str, Any]:
    """What `Prefer` can ask of `operation`, as headers. Those are its declared statuses and its named examples."""
    examples = [
        {"name": name, "status": int(status), "header": f"Prefer: example={name}"}
        for status, response in operation.responses.items()
        if status.isdecimal()
        for content in response.get("content", {}).values()
        for name in content.get("examples", {})
    ]
    return {
        "operationId": operation.operation_id,
        "method": operation.method,
        "path": operation.template,
        "surface": operation.surface,
        "statuses": [{"status": code, "header": f"Prefer: code={code}"} for code in operation.declared()],
        "examples": examples,
    }


class Dashboard:
    def __init__(self, journal: Journal) -> None:
        self.broadcast = Broadcast(journal)
        self.index = journal.index
        package = resources.files(__package__) / "static"
        self.files = {path: ((package / name).read_bytes(), media) for path, (name, media) in FILES.items()}

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        """(method, path, endpoint), beside the admin API's and behind its guard."""
        return [
            ("GET", PREFIX + "/ui", self.slash),
            *(("GET", path, self.file) for path in FILES),
            ("GET", f"{UI}operations", self.operations),
            ("GET", f"{UI}stream", self.broadcast.stream),
        ]

    async def slash(self, request: Request) -> Response:
        return RedirectResponse(UI)

    async def file(self, request: Request) -> Response:
        content, media = self.files[request.url.path]
        headers = {"Content-Security-Policy": POLICY, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        return Response(content, media_type=media, headers=headers)

    async def operations(self, request: Request) -> Response:
        """Each operation of the spec with the `Prefer` headers it takes, for the page's steering help."""
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for _, operation in self.index.operations:
            seen.setdefault((operation.operation_id, operation.surface), steering_help(operation))
        return JSONResponse(list(seen.values()))
