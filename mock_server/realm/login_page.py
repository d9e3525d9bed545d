"""The realm's pages, the login form for the dev users and the pages that end a flow in the browser.

The form keeps Keycloak's element ids and field names, so a browser test written against Keycloak's
login page runs here too. They are `kc-form-login`, `username`, `password`, `kc-login` and
`input-error`.
"""

from __future__ import annotations

from html import escape

STYLE = """
body { font-family: system-ui, sans-serif; background: #f0f2f5; margin: 0; }
main { max-width: 22rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px;
       box-shadow: 0 1px 4px rgba(0, 0, 0, .15); }
h1 { font-size: 1.3rem; margin-top: 0; }
label { display: block; margin-top: 1rem; font-size: .9rem; }
input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; margin-top: .25rem; }
input[type=submit] { margin-top: 1.5rem; width: 100%; padding: .6rem; background: #0066cc; color: #fff;
                     border: 0; border-radius: 4px; font-size: 1rem; cursor: pointer; }
#input-error { color: #c00; display: block; margin-top: 1rem; }
.hint { color: #666; font-size: .85rem; margin-top: 1.5rem; }
"""


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def login_page(
    realm: str, client_id: str, action: str, users: list[str], error: str | None = None, username: str = ""
) -> str:
    """The login form. `action` is where it posts, the pending request's URL."""
    message = f'<span id="input-error" role="alert">{escape(error)}</span>' if error else ""
    hint = f'<p class="hint">Dev realm of the shop mock. Users: {escape(", ".join(users))}.</p>' if users else ""
    return page(
        f"Sign in to {realm}",
        f"<h1>Sign in to {escape(realm)}</h1>"
        f"<p>to continue to <strong>{escape(client_id)}</strong></p>{message}"
        f'<form id="kc-form-login" action="{escape(action)}" method="post">'
        f'<label for="username">Username</label>'
        f'<input id="username" name="username" type="text" value="{escape(username)}" autofocus'
        ' autocomplete="username">'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" autocomplete="current-password">'
        '<input id="kc-login" name="login" type="submit" value="Sign In">'
        f"</form>{hint}",
    )


def error_page(message: str) -> str:
    return page("We are sorry...", f'<h1>We are sorry...</h1><p id="kc-error-message">{escape(message)}</p>')


def logout_confirm_page(action: str, code: str) -> str:
    """Keycloak's logout confirmation. Its form posts `session_code` with the button `confirmLogout`."""
    return page(
        "Logging out",
        '<h1>Logging out</h1><div id="kc-logout-confirm"><p class="instruction">Do you want to log out?</p>'
        f'<form action="{escape(action)}" method="post">'
        f'<input type="hidden" name="session_code" value="{escape(code)}">'
        '<input id="kc-logout" name="confirmLogout" type="submit" value="Logout"></form></div>',
    )


def logged_out_page() -> str:
    return page("Logged out", "<h1>You are logged out</h1>")
