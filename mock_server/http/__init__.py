"""ASGI plumbing that knows no operation of the contract: request limits on uvicorn's protocol
(`limits`), CORS (`cors`), one scan of a request's header names (`header_names`), a proxy's
forwarded host and scheme (`forwarded`), the admin guard's `Host` and `Origin` rules (`hosts`),
the generic middleware (last-resort 500, body limit, Allow, body replay: `middleware`) and the one
rule masking credentials in logs and the journal (`masking`).

May import: `spec` (the Problem renderer in `spec.errors`). Never `api`, `control` or `state`.
"""
