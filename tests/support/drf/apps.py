"""The Django application of the shop backend."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created

from tests.support.drf.collation import register


class ShopConfig(AppConfig):
    name = "tests.support.drf"
    label = "shop"
    default_auto_field = "django.db.models.AutoField"

    def ready(self) -> None:
        """Every database connection gets the case-insensitive collation before its first query."""
        connection_created.connect(register)
