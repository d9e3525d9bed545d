"""The conflicts of the spec's decisions, as DRF API exceptions (409)."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException


class IdentifierChanged(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The identifier in the body differs from the path: identifiers cannot be changed."
    default_code = "identifier_changed"


class HasDependants(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The item still has dependants and cannot be deleted."
    default_code = "has_dependants"


class Duplicate(APIException):
    """An INSERT the database refused for its identifier (IntegrityError): a concurrent create won."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "An item with this identifier exists."
    default_code = "duplicate"
