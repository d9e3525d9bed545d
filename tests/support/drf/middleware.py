"""A body-size limit in front of the views, as the reverse proxy of a deployed service sets it."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from tests.support.drf.config import MAX_BODY_BYTES


class BodyLimit:
    """413 for a request body declared larger than 1 MiB, before anything reads it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            return JsonResponse({"detail": f"Request body larger than {MAX_BODY_BYTES} bytes."}, status=413)
        return self.get_response(request)
