"""A real Django REST Framework service implementing the shop interface, as test support.

Written the way the DRF documentation shows (models, ModelSerializer, ModelViewSet, DefaultRouter,
PageNumberPagination, ``@action`` sub-lists, custom authentication classes) from the two interface
documents and the decisions of the spec, not from the spec file: it retypes field bounds on its
models as any backend team would, so that the contract suite is tested against an implementation
that could disagree with the spec. SQLite in a temporary directory, seeded from ``fixtures/``,
served in a subprocess (see ``server.serve``) by one of ``SERVERS``: uvicorn (ASGI), or gunicorn
(WSGI, 2 workers) with its default sync workers, which close the connection after every response,
or with gthread workers, which keep it alive.

Mount points: ``/shop/api/v1/`` (every operation; ``X-API-Key`` or a bearer JWT) and
``/customers/v1/`` (the customers operations; bearer JWT only, as the gateway in front of the
same backend).

The ``correct`` configuration follows every decision of the spec. Each name in ``VARIANTS`` is the
same service with ONE defect that DRF services commonly ship:

- ``unprotected_fk``: foreign keys with ``on_delete=DO_NOTHING`` instead of ``PROTECT``; deleting a
  product line with products, a product with order details or a customer with orders or payments
  fails on SQLite's foreign-key constraint and answers 500 (nothing is deleted).
- ``default_lookup``: DRF's default lookup regex ``[^/.]+``; an identifier containing "." is created
  (201) but every GET, PUT, PATCH and DELETE of it is 404.
- ``writable_pk``: the identifier is writable on update; a PUT or PATCH whose body carries another
  identifier copies the item (Django saves a new row; the old one stays).
- ``patch_resets``: each serializer's ``validate()`` normalises one field assuming it was sent, so a
  PATCH that does not send it resets it: a product line's ``htmldescription`` (to null), a
  product's ``productscale`` (to "1:18"), a customer's ``addressline2`` (to null).
- ``wrong_previous``: a paginator whose ``previous`` link on page N >= 2 points to page N.

Each name in ``ADMITTED`` is the correct service answering one way the spec admits besides its own
(its ``info.x-decisions``), which the suite must accept:

- ``blank_kept``: DRF's own form parsing: an empty form value for a nullable string that allows blank
  is kept as "" (the correct configuration stores null, as the mock does).
- ``case_insensitive``: the string identifiers in a collation that ignores letter case for all of
  Unicode (``collation.py``), as MySQL's default collation has them: a lookup finds the item whatever
  the case and answers its stored spelling, a create of a case variant is a duplicate (DRF's unique
  validator: 400), and lists are in the order of the case-folded identifier.

Each name in ``RACES`` is a defect only concurrent requests show (gunicorn's workers serving them side
by side; one request at a time, the service is correct), found by the checks of concurrent writes:

- ``unlocked_writes``: writes as ModelViewSet makes them, outside a transaction: a PATCH reads the row
  and ``serializer.save()`` writes the whole row back (a concurrent PATCH of another field is lost;
  a concurrent DELETE is undone, as ``Model.save()`` inserts a row its UPDATE did not find), and the
  uniqueness of a new identifier is checked by a SELECT before the INSERT (the loser's IntegrityError
  is a 500). The correct configuration makes each write one transaction begun with ``BEGIN IMMEDIATE``
  (SQLite's ``transaction_mode``: ``select_for_update`` is a no-op on SQLite), so writers take turns,
  and turns an IntegrityError into the documented 409.

Each name in ``COMBINED`` has several of those at once: ``realistic`` is the real service issue 17
describes (``unprotected_fk``, ``default_lookup`` and ``writable_pk``, and DRF's own ``blank_kept``),
with the writes of issue 36 (``unlocked_writes``).
"""

from __future__ import annotations

CORRECT = "correct"
VARIANTS = ("unprotected_fk", "default_lookup", "writable_pk", "patch_resets", "wrong_previous")
ADMITTED = ("blank_kept", "case_insensitive")
RACES = ("unlocked_writes",)
COMBINED = {"realistic": ("unprotected_fk", "default_lookup", "writable_pk", "blank_kept", "unlocked_writes")}
CONFIGURATIONS = (CORRECT, *ADMITTED, *VARIANTS, *COMBINED)
"""Every configuration the backend serves."""
SERVERS = ("uvicorn", "gunicorn-sync", "gunicorn-gthread", "gunicorn-sync-one")
"""`gunicorn-sync-one`: one sync worker, which takes requests one at a time."""
API_KEY = "dev-api-key"
