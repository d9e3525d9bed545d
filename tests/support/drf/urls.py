"""The two mount points: the backend (every operation) and the gateway (the customers operations)."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from tests.support.drf.views import CustomerViewSet, GatewayCustomerViewSet, ProductLineViewSet, ProductViewSet

backend = DefaultRouter()
backend.register("productlines", ProductLineViewSet)
backend.register("products", ProductViewSet)
backend.register("customers", CustomerViewSet)

gateway = DefaultRouter()
gateway.register("customers", GatewayCustomerViewSet)

urlpatterns = [
    path("shop/api/v1/", include((backend.urls, "backend"))),
    path("customers/v1/", include((gateway.urls, "gateway"))),
]
