"""What is not the contract: the admin API and its guard (`admin`, `admin_guard`), the request journal
(`journal/`) and the consumer contract it records (`contract`), fault injection (`faults`), `Prefer`
steering (`prefer`, `steering`), sessions and the scope making a session's store current
(`sessions/`), the validation proxy (`proxy`, `backend_client`), the landing page, the
dashboard and the Swagger UI (`landing`, `dashboard/`, `swagger_ui`), and `bypass`: the way past all
of them for a request that asks for none.

May import: `spec`, `state`, `http`, `api`, `realm`, and `settings` (read only). Each concept with a
memory and a Redis back end (journal, sessions) is one package owning both.
"""
