"""The names of every check the suite runs, by family. `--checks` accepts them, and the reports group by them.

The module sits at the bottom of the suite so that the options, the judging and the outcome all read one list.
"""

from __future__ import annotations

DOMAIN_CHECKS = (
    "pagination_page",
    "pagination_walk",
    "list_scoping",
    "item_identity",
    "write_echo",
    "round_trip",
    "deleted_stays_deleted",
    "duplicate_rejected",
    "surface_parity",
    "auth_matrix",
    "body_encodings",
    "referential_rules",
    "invalid_values_rejected",
    "identifier_addressable",
    "identifier_immutable",
    "patch_locality",
    "read_back_identical",
    "deleted_everywhere",
    "unknown_not_found",
    "list_order",
    "identifier_variants",
    "request_shapes",
    "concurrent_lost_update",
    "concurrent_same_field",
    "concurrent_duplicate_create",
    "concurrent_write_delete",
    "concurrent_reference_delete",
    "concurrent_sub_list_count",
)
RACE_TRIES = 44
"""Tries of each check of concurrent writes (`concurrent_*`, `--race-tries`). A race lost one try in ten is
found in more than 99 runs in 100, as 1 - 0.9**44 > 0.99 (judge/domain/racing.py)."""
STRICT_CHECKS = (
    "negative_data_rejection",
    "exact_page_size",
    "duplicate_is_conflict",
    "identifier_change_is_conflict",
    "external_reference_accepted",
)
CONSUMER_CHECKS = ("consumer_status", "consumer_response", "consumer_fields", "consumer_revision")
"""A consumer contract's interactions (`--consumer FILE`, contract_tests/judge/consumer/).

They are replayed on a backend, which must give the same status class as the mock, a conforming answer
and every field the consumer received. Otherwise they are read against a spec revision."""
TRANSPORT_CHECKS = ("response_time", "response_size", "response_decodable")
"""Verdicts on any request of the run. `response_time` finds no whole answer within the deadline, and
`response_size` one past the size limit. `response_decodable` finds a body that cannot be read as its
Content-Type says: an unknown charset, bytes invalid in it, or a charset that lies."""
SCHEMATHESIS_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
)
ALL_CHECKS = (*DOMAIN_CHECKS, *STRICT_CHECKS, *TRANSPORT_CHECKS, *SCHEMATHESIS_CHECKS, *CONSUMER_CHECKS)
