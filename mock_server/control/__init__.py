"""What is not the contract. This package holds:

- The admin API and its guard (`admin`, `admin_guard`).
- The request journal (`journal/`) and the consumer contract it records (`contract`).
- Fault injection (`faults/`) and `Prefer` steering (`prefer`, `steering`).
- The test sessions a request names with X-Mock-Session, and the scope that makes a session's store
  current (`mock_sessions/`).
- The validation proxy and its violations (`proxy`, `backend_client`, `violations/`).
- The landing page, the dashboard and the Swagger UI (`landing`, `dashboard/`, `swagger_ui`).
- `bypass`, the way past all of them for a request that asks for none.

It may import `spec`, `state`, `http`, `api`, `realm`, and `settings` (read only). Each concept with a
memory and a Redis half is one package owning both. Those are the journal, faults, violations and
test sessions.
"""
