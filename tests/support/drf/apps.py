"""The Django application of the shop backend."""

from __future__ import annotations

from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "tests.support.drf"
    label = "shop"
    default_auto_field = "django.db.models.AutoField"
