"""report.html: the run for people, one self-contained file (inline CSS, script and SVG; no network).

The page holds findings.json's document, unchanged, in one `<script type="application/json">`. It
renders everything from it, so the page and findings.json cannot disagree.

What a target sent reaches the page only inside that blob. Its `<`, `>` and `&` are written as JSON
escapes, so no text can close the script element. It is put into the page as text nodes, never parsed
as HTML, so a hostile body or header shows as what it is.

The template is Jinja2 (contract_tests/templates/report.html.j2). Autoescaping is on for the few
values it writes itself.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2

TEMPLATE = "report.html.j2"
_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("contract_tests.outcome", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def blob(document: dict[str, Any]) -> str:
    """`document` as JSON that can sit inside a script element whatever its strings hold."""
    return json.dumps(document, ensure_ascii=False).translate(_SCRIPT_SAFE)


def render(document: dict[str, Any]) -> str:
    """The page for a findings.json `document` (report.as_json)."""
    new = "new " if document.get("baseline") else ""
    verdict = f"{new}violations found" if document["violations"] else f"no {new}violation"
    if document.get("errors"):
        verdict += "; parts of the run could not complete"
    if document.get("baseline"):
        verdict += f"; {len(document['baseline']['accepted'])} accepted by the baseline"
    if document.get("aborted"):
        verdict = "run stopped before its end"
    return _ENVIRONMENT.get_template(TEMPLATE).render(data=blob(document), verdict=verdict)
