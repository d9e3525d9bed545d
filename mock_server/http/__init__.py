"""ASGI plumbing that knows no operation of the contract. This package holds:

- Request limits on uvicorn's protocol (`limits`).
- CORS (`cors`).
- One scan of a request's header names (`header_names`).
- A proxy's forwarded host and scheme (`forwarded`).
- The admin guard's `Host` and `Origin` rules (`hosts`).
- The generic middleware (`middleware`): the last-resort 500, the body limit, Allow, and body replay.
- The one rule masking credentials in logs and the journal (`masking`).

It may import `spec`, for the Problem renderer in `spec.errors`. It never imports `api`, `control` or
`state`.
"""
