"""The dashboard at /__mock__/ui/: a page for the front-end developer, served by the mock itself.

`page` serves the page's three static files (shipped in `static/`, no build step, no CDN) and the
steering help read from the spec; `stream` streams the journal's exchanges to open pages as
Server-Sent Events, bounded (at most `MAX_STREAMS` pages, a slow one dropped). Everything else the
page shows or changes goes through the admin API, behind the same `AdminGuard`; the page's own
files need no token (a browser cannot send a header on a navigation): the page asks for the token
and sends it as a header on every call.

May import what `control` may.
"""
