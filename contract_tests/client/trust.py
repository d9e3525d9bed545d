"""Which TLS certificates the suite trusts: the same answer for both of its HTTP clients.

httpx and requests each read their own environment variables (httpx SSL_CERT_FILE, requests
REQUESTS_CA_BUNDLE); here the choice is made once, in this order: `--insecure` (no verification, for a
self-signed development certificate), `--ca-bundle FILE`, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, and
otherwise certifi's public CAs, as both clients do by default.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from pathlib import Path

import httpx

from contract_tests.options import UsageError

CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
"""Environment variables naming a CA bundle, honoured in this order when `--ca-bundle` is not given."""


@dataclass(frozen=True)
class Trust:
    ca_bundle: Path | None = None
    insecure: bool = False

    def bundle(self) -> tuple[str, str] | None:
        """The CA bundle to verify against and what named it; None: certifi's, or no verification."""
        if self.insecure:
            return None
        if self.ca_bundle is not None:
            return str(self.ca_bundle), "--ca-bundle"
        return next(((os.environ[name], name) for name in CA_VARIABLES if os.environ.get(name)), None)

    def verify(self) -> str | bool:
        """requests' `verify`: False, a bundle's path, or True (certifi)."""
        bundle = self.bundle()
        return not self.insecure if bundle is None else bundle[0]

    def ssl_context(self) -> ssl.SSLContext:
        """httpx's `verify`; UsageError when the bundle cannot be read as certificates."""
        if self.insecure:
            return httpx.create_ssl_context(verify=False)
        bundle = self.bundle()
        if bundle is None:
            return httpx.create_ssl_context(trust_env=False)
        path, named = bundle
        try:
            return ssl.create_default_context(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"{named} {path}: not a readable PEM file of CA certificates ({exc})") from exc
