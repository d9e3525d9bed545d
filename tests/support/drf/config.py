"""Django settings of the backend, built in code: they are process-global, so one variant per process."""

from __future__ import annotations

from pathlib import Path

import django
from django.conf import settings

from tests.support.drf import COMBINED, CONFIGURATIONS

MAX_BODY_BYTES = 1024 * 1024


def configure(variant: str, realm_url: str, database: Path) -> None:
    """Configure Django for `variant`, verifying tokens of the realm at `realm_url`, storing in `database`."""
    if variant not in CONFIGURATIONS:
        raise ValueError(f"unknown variant {variant!r}")
    settings.configure(
        DEBUG=False,
        SECRET_KEY="shop-drf-test-backend",  # signs nothing: no sessions, no CSRF
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF="tests.support.drf.urls",
        INSTALLED_APPS=["rest_framework", "tests.support.drf.apps.ShopConfig"],
        MIDDLEWARE=["tests.support.drf.middleware.BodyLimit"],
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.sqlite3",
                "NAME": str(database),
                "CONN_MAX_AGE": None,
                "OPTIONS": {
                    # WAL without an fsync per commit, as SQLite advises for a busy writer: halves every write
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                    # A write's transaction takes the write lock as it begins, its reads included: writers
                    # take turns (the views' `atomic` writes; `unlocked_writes` has none).
                    "transaction_mode": "DEFERRED" if variant_has(variant, "unlocked_writes") else "IMMEDIATE",
                },
            }
        },
        DATA_UPLOAD_MAX_MEMORY_SIZE=MAX_BODY_BYTES,
        USE_TZ=True,
        LOGGING={  # server errors to stderr (Django mails them to admins by default)
            "version": 1,
            "handlers": {"stderr": {"class": "logging.StreamHandler"}},
            "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
        },
        REST_FRAMEWORK={
            "DEFAULT_AUTHENTICATION_CLASSES": [
                "tests.support.drf.authentication.ApiKeyAuthentication",
                "tests.support.drf.authentication.JWTAuthentication",
            ],
            "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
            "DEFAULT_PAGINATION_CLASS": "tests.support.drf.pagination.Pagination",
            "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
            "UNAUTHENTICATED_USER": None,  # no django.contrib.auth: clients are not users here
            "URL_FORMAT_OVERRIDE": None,  # `?format=` is an unknown query parameter, ignored
        },
        SHOP_VARIANT=variant,
        SHOP_REALM_URL=realm_url.rstrip("/"),
    )
    django.setup()


def variant() -> str:
    """The variant this process serves."""
    name: str = settings.SHOP_VARIANT
    return name


def has(defect: str) -> bool:
    """Whether the variant this process serves has `defect` (one of VARIANTS, ADMITTED or RACES), alone or
    combined."""
    return variant_has(variant(), defect)


def variant_has(name: str, defect: str) -> bool:
    return defect in COMBINED.get(name, (name,))
