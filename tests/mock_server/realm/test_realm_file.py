"""The realm's file and keys: a team's realm export is honoured, the signing key outlives restarts
and rotates, and an unusable file is one clear line at start."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, DEV_PASSWORD, DEV_USERNAME
from mock_server.app import create_app
from mock_server.realm import KeyFileError, RealmFileError, keys
from mock_server.realm.keys import MAX_KEY_FILE_BYTES, KeyRing
from mock_server.realm.realm_file import MAX_REALM_FILE_BYTES, read_realm_file
from mock_server.settings import DEFAULT_REALM_FILE, Settings
from tests.conftest import BACKEND, DEV_CLIENT, TOKEN_PATH
from tests.support.hostile_files import sparse
from tests.support.live import running

CERTS = "/realms/shop/protocol/openid-connect/certs"


def start(settings: Settings, *held: str) -> tuple[str, list[str], list[bool]]:
    """Start a mock: a new token, the kids its JWKS publishes, and whether it accepts the `held` tokens."""
    with running(create_app(settings)) as origin, httpx.Client(base_url=origin) as http:
        token = http.post(TOKEN_PATH, data=DEV_CLIENT).json()["access_token"]
        kids = [key["kid"] for key in http.get(CERTS).json()["keys"]]
        accepted = [
            http.get(f"{BACKEND}/productlines/", headers={"Authorization": f"Bearer {old}"}).status_code == 200
            for old in held
        ]
        return token, kids, accepted


def test_the_signing_key_outlives_a_restart_and_rotates(tmp_path: Path) -> None:
    key_file = tmp_path / "cache" / "realm-keys.pem"
    settings = Settings(realm_key=key_file)
    token, kids, _ = start(settings)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert jwt.get_unverified_header(token)["kid"] == kids[0]
    # a new process, the same key: the token a browser holds still works
    assert start(settings, token)[1:] == (kids, [True])

    new_token, new_kids, accepted = start(Settings(realm_key=key_file, rotate_realm_key=True), token)
    assert len(new_kids) == 2 and new_kids[1] == kids[0]
    assert jwt.get_unverified_header(new_token)["kid"] == new_kids[0] != kids[0]
    assert accepted == [True]  # signed before the rotation, still valid
    for _ in range(3):
        KeyRing.from_file(key_file, rotate=True)
    _, kept, accepted = start(settings, token, new_token)
    assert len(kept) == 3  # the newest three keys are kept; the first two are gone
    assert accepted == [False, False]


def test_without_a_key_file_every_start_has_its_own_key() -> None:
    token, _, _ = start(Settings())
    assert start(Settings(), token)[2] == [False]


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """One entry for each RSA key the realm makes from now on."""
    made: list[object] = []
    real = keys.new_key
    monkeypatch.setattr(keys, "new_key", lambda: made.append(1) or real())
    return made


def test_without_a_key_file_the_key_is_made_once_at_the_first_token(made: list[object]) -> None:
    """A start serving only the API makes no RSA key (tens of milliseconds). Eight first tokens signed at
    once on threads, as Starlette's thread pool would, make one key, and each verifies."""
    realm = create_app(Settings()).realm
    assert made == []
    barrier = threading.Barrier(8)

    def first_token(_: int) -> str:
        barrier.wait()
        return realm.sign({"iat": 1, "exp": 2**40, "iss": realm.issuer, "typ": "Bearer"})

    with ThreadPoolExecutor(8) as pool:
        tokens = list(pool.map(first_token, range(8)))
    assert made == [1]
    assert all(realm.verify(token) is not None for token in tokens)
    realm.make_keys()  # as a server does before it accepts connections: made already, so nothing more
    assert made == [1]


def test_make_keys_makes_the_key_before_any_token(made: list[object]) -> None:
    """What a server calls before it accepts connections: the first token then makes no key."""
    realm = create_app(Settings()).realm
    realm.make_keys()
    assert made == [1]
    assert realm.verify(realm.sign({"iat": 1, "exp": 2**40, "iss": realm.issuer, "typ": "Bearer"})) is not None
    assert made == [1]


@pytest.mark.parametrize(
    "content", [b"", b"not a key", b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"]
)
def test_an_unusable_key_file_is_refused_at_start(tmp_path: Path, content: bytes) -> None:
    key_file = tmp_path / "keys.pem"
    key_file.write_bytes(content)
    with pytest.raises(KeyFileError, match=f"realm key file {key_file}"):
        create_app(Settings(realm_key=key_file))


def hashed_password(password: str, iterations: int = 1000) -> dict[str, Any]:
    """A credential as Keycloak exports it (pbkdf2-sha256, its JSON-in-strings shape)."""
    salt = b"0123456789abcdef"
    value = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations, 64)
    return {
        "type": "password",
        "secretData": json.dumps({"value": base64.b64encode(value).decode(), "salt": base64.b64encode(salt).decode()}),
        "credentialData": json.dumps({"hashIterations": iterations, "algorithm": "pbkdf2-sha256"}),
    }


TEAM_REALM: dict[str, Any] = {
    "realm": "acme",
    "accessTokenLifespan": 120,
    "roles": {"realm": [{"name": "buyer", "composite": True, "composites": {"realm": ["viewer"]}}]},
    "users": [
        {"username": "jürgen", "credentials": [{"type": "password", "value": "pässwört"}], "realmRoles": ["buyer"]},
        {"username": "hashed", "credentials": [hashed_password("from-export")]},
        {"username": "off", "enabled": False, "credentials": [{"type": "password", "value": "x"}]},
    ],
    "clients": [
        {"clientId": "clïent", "secret": "sécret", "directAccessGrantsEnabled": True, "serviceAccountsEnabled": True}
    ],
    "components": {"ignored": "Keycloak's other settings do not matter"},
}


def test_a_teams_realm_export_is_honoured(tmp_path: Path) -> None:
    realm_file = tmp_path / "acme-realm.json"
    realm_file.write_text(json.dumps(TEAM_REALM), encoding="utf-8")
    with running(create_app(Settings(realm_file=realm_file))) as origin, httpx.Client(base_url=origin) as http:
        token_path = "/realms/acme/protocol/openid-connect/token"
        client = {"client_id": "clïent", "client_secret": "sécret", "grant_type": "password", "scope": "openid"}
        answer = http.post(token_path, data={**client, "username": "jürgen", "password": "pässwört"})
        assert answer.status_code == 200, answer.text
        claims = jwt.decode(answer.json()["access_token"], options={"verify_signature": False})
        assert claims["iss"] == "http://127.0.0.1:8000/realms/acme"
        assert {"buyer", "viewer"} <= set(claims["realm_access"]["roles"])
        assert answer.json()["expires_in"] == 120
        assert (
            http.post(token_path, data={**client, "username": "hashed", "password": "from-export"}).status_code == 200
        )
        for username, password in (("hashed", "wrong"), ("off", "x"), ("jürgen", "passwort")):
            refused = http.post(token_path, data={**client, "username": username, "password": password})
            assert (refused.status_code, refused.json()["error"]) == (401, "invalid_grant"), username
        basic = base64.b64encode(b"cl%C3%AFent:s%C3%A9cret").decode()  # RFC 6749: URL-encoded, then Basic
        service = http.post(
            token_path, data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"}
        )
        assert service.status_code == 200, service.text
        assert http.post(TOKEN_PATH, data=DEV_CLIENT).status_code == 404  # no realm "shop" any more


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "not valid JSON"),
        ({"users": []}, "no `realm` name"),
        ({"realm": "x", "clients": [{"clientId": "c"}]}, "confidential but has no `secret`"),
        ({"realm": "x", "accessTokenLifespan": "300"}, "`accessTokenLifespan` must be 1 to 2147483647 seconds"),
        ({"realm": "x", "accessTokenLifespan": 0}, "`accessTokenLifespan` must be 1 to 2147483647 seconds"),
        ({"realm": "x", "ssoSessionMaxLifespan": 2**31}, "`ssoSessionMaxLifespan` must be 1 to 2147483647 seconds"),
        (
            {
                "realm": "x",
                "users": [
                    {
                        "username": "u",
                        "credentials": [
                            {
                                "type": "password",
                                "secretData": "{}",
                                "credentialData": json.dumps({"algorithm": "argon2"}),
                            }
                        ],
                    }
                ],
            },
            "password hash 'argon2' is not supported",
        ),
    ],
)
def test_an_unusable_realm_file_is_refused_naming_the_problem(tmp_path: Path, document: Any, message: str) -> None:
    realm_file = tmp_path / "realm.json"
    realm_file.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with pytest.raises(RealmFileError, match=message):
        read_realm_file(realm_file)


@pytest.mark.parametrize(
    ("option", "content", "message"),
    [
        ("--realm", None, "realm file {path}: No such file or directory"),
        ("--realm", b"{}", "realm file {path}: not a Keycloak realm export: no `realm` name"),
        ("--realm-key", b"not a key", "realm key file {path}: no PEM private key in it"),
        # A gigabyte (a wrong path, /dev/zero) was read whole: the machine's memory, not a line.
        ("--realm", 2**30, f"realm file {{path}}: larger than {MAX_REALM_FILE_BYTES} bytes"),
        ("--realm-key", 2**30, f"realm key file {{path}}: larger than {MAX_KEY_FILE_BYTES} bytes"),
    ],
)
def test_the_cli_says_what_is_wrong_in_one_line_and_exits_2(
    tmp_path: Path, option: str, content: bytes | int | None, message: str
) -> None:
    path = tmp_path / "given"
    if isinstance(content, int):
        sparse(path, content)
    elif content is not None:
        path.write_bytes(content)
    command = [sys.executable, "-m", "mock_server", option, str(path), "--port", "0"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)  # never serves
    assert result.returncode == 2
    assert result.stderr == f"shop-mock: error: {message.format(path=path)}\n"


def test_the_shipped_realm_file_holds_the_documented_dev_credentials() -> None:
    config = read_realm_file(DEFAULT_REALM_FILE)
    assert config.clients[DEV_CLIENT_ID].secret == DEV_CLIENT_SECRET
    assert config.users[DEV_USERNAME].password.matches(DEV_PASSWORD)
    web = config.clients["shop-web"]
    assert web.public and web.pkce_method == "S256"
    assert web.accepts_redirect("http://localhost:5173/callback") and web.accepts_redirect("http://127.0.0.1:4200/")
    assert not web.accepts_redirect("https://localhost:5173/") and not web.accepts_redirect("http://localhost.evil/")
