"""What is not the contract: the admin API and its guard (`admin`, `admin_guard`), the request journal
(`journal/`) and the consumer contract it records (`contract`), fault injection (`faults/`), `Prefer`
steering (`prefer`, `steering`), the test sessions a request names with X-Mock-Session and the scope
making a session's store current (`mock_sessions/`), the validation proxy and its violations
(`proxy`, `backend_client`, `violations/`), the landing page, the dashboard and the Swagger UI
(`landing`, `dashboard/`, `swagger_ui`), and `bypass`, the way past all of them for a request that
asks for none.

May import: `spec`, `state`, `http`, `api`, `realm`, and `settings` (read only). Each concept with a
memory and a Redis half (journal, faults, violations, test sessions) is one package owning both.
"""
