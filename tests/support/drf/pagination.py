"""Page-number pagination: 20 by default, `page_size` up to 100 (larger values are clamped)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination
from rest_framework.utils.urls import replace_query_param

from tests.support.drf.config import has


class ShopPagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class CurrentPageAsPrevious(ShopPagination):
    """The defect of `wrong_previous`: `previous` built from the current page's number."""

    def get_previous_link(self) -> str | None:
        if not self.page.has_previous():
            return None
        link: str = replace_query_param(self.request.build_absolute_uri(), self.page_query_param, self.page.number)
        return link


Pagination = CurrentPageAsPrevious if has("wrong_previous") else ShopPagination
