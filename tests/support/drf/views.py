"""ModelViewSets of the interface; the nested lists are paginated `@action(detail=True)` routes."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Model, ProtectedError, QuerySet
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from tests.support.drf import serializers
from tests.support.drf.authentication import JWTAuthentication
from tests.support.drf.config import has
from tests.support.drf.exceptions import Duplicate, HasDependants
from tests.support.drf.models import Customer, Product, ProductLine

# Any character but "/" (which Django decodes before routing); the defect of `default_lookup` is
# DRF's default, which also excludes ".".
LOOKUP = "[^/.]+" if has("default_lookup") else "[^/]+"
RESETS = has("patch_resets")
LOCKED = not has("unlocked_writes")


class ShopViewSet(viewsets.ModelViewSet):
    lookup_value_regex = LOOKUP

    # Each write is one transaction, begun with BEGIN IMMEDIATE (config.py): its read of the row, its
    # uniqueness check and its write happen while no other writer can change the row. A create a
    # concurrent one beat all the same is the documented 409, never a 500.
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not LOCKED:
            return super().create(request, *args, **kwargs)
        try:
            with transaction.atomic():
                return super().create(request, *args, **kwargs)
        except IntegrityError:
            raise Duplicate() from None

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not LOCKED:
            return super().update(request, *args, **kwargs)
        with transaction.atomic():
            return super().update(request, *args, **kwargs)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not LOCKED:
            return super().destroy(request, *args, **kwargs)
        with transaction.atomic():
            return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: Model) -> None:
        try:
            instance.delete()
        except ProtectedError as error:
            dependants = sorted({str(type(item)._meta.verbose_name_plural) for item in error.protected_objects})
            raise HasDependants(f"Still has {', '.join(dependants)}: nothing was deleted.") from None

    def paginated(self, queryset: QuerySet[Any], serializer_class: type[BaseSerializer[Any]]) -> Response:
        """One page of a sub-list, in the same envelope as the main lists."""
        page = self.paginate_queryset(queryset)
        serializer = serializer_class(page, many=True, context=self.get_serializer_context())
        return self.get_paginated_response(serializer.data)


class ProductLineViewSet(ShopViewSet):
    queryset = ProductLine.objects.all()
    serializer_class = serializers.ResettingProductLineSerializer if RESETS else serializers.ProductLineSerializer

    @action(detail=True)
    def products(self, request: Request, pk: str) -> Response:
        return self.paginated(self.get_object().products.order_by("productcode"), serializers.ProductSerializer)


class ProductViewSet(ShopViewSet):
    queryset = Product.objects.all()
    serializer_class = serializers.ResettingProductSerializer if RESETS else serializers.ProductSerializer

    @action(detail=True, url_path="order-details")
    def order_details(self, request: Request, pk: str) -> Response:
        return self.paginated(self.get_object().order_details.order_by("id"), serializers.OrderDetailSerializer)


class CustomerViewSet(ShopViewSet):
    queryset = Customer.objects.all()
    serializer_class = serializers.ResettingCustomerSerializer if RESETS else serializers.CustomerSerializer

    @action(detail=True)
    def orders(self, request: Request, pk: str) -> Response:
        return self.paginated(self.get_object().orders.order_by("ordernumber"), serializers.OrderSerializer)

    @action(detail=True)
    def payments(self, request: Request, pk: str) -> Response:
        return self.paginated(self.get_object().payments.order_by("id"), serializers.PaymentSerializer)


class GatewayCustomerViewSet(CustomerViewSet):
    """The customers operations behind the gateway, which admits bearer tokens only."""

    authentication_classes = (JWTAuthentication,)
