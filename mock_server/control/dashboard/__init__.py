"""The dashboard at /__mock__/ui/: a page for the front-end developer, served by the mock itself.

`page` serves the page's three static files and the steering help read from the spec. The files are
shipped in `static/`, with no build step and no CDN. `stream` streams the journal's exchanges to open
pages as Server-Sent Events. It is bounded: at most `MAX_STREAMS` pages, and a slow one is dropped.

Everything else the page shows or changes goes through the admin API, behind the same `AdminGuard`.
The page's own files need no token, because a browser cannot send a header on a navigation. So the
page asks for the token, and sends it as a header on every call.

It may import what `control` may.
"""
