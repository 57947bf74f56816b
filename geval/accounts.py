"""Accounts for a team: who may sign in to the app, with which role, and their passwords, hashed.

With no account in the store the app is one local user's, as it always was: no sign-in, every page.
Once `geval users add` makes one, every visitor signs in (the app's `studio.auth`, through
streamlit-authenticator, whose bcrypt check reads the hashes made here): a *lead* sees every page
and makes queues; an *annotator* sees their own queue only (`geval.labeling.queues`).

Passwords are hashed with bcrypt (a salted, slow hash: what streamlit-authenticator's `Hasher`
makes too) before they reach the store, and go nowhere else: never into a message, a log, a URL or
an error. A name is one word in lower case a URL and a file can carry (letters, digits, ".", "_", "-").
"""

from __future__ import annotations

import re
import secrets

import bcrypt

from geval.errors import GevalError

ROLES = ("lead", "annotator")
#: bcrypt reads at most 72 bytes of a password; a longer one would be cut silently.
MAX_PASSWORD_BYTES = 72
MIN_PASSWORD_CHARACTERS = 8
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")


class AccountError(GevalError):
    """An account's name, role or password is not acceptable (the message never holds the password)."""


def check_name(name: str) -> str:
    """`name` stripped and in lower case (sign-in reads names so), when it is a user name a URL can
    carry; AccountError otherwise."""
    name = (name or "").strip().lower()
    if not NAME.fullmatch(name):
        raise AccountError(f"user name {name!r} is not one word of letters, digits, '.', '_' or '-' (up to 40 "
                           "characters, starting with a letter or digit); choose another")
    return name


def check_role(role: str) -> str:
    """`role` when it is one of ROLES; AccountError otherwise."""
    if role not in ROLES:
        raise AccountError(f"role {role!r} is unknown; use one of {', '.join(ROLES)}")
    return role


def hash_password(password: str) -> str:
    """The bcrypt hash of `password` (salted; what the store keeps). AccountError, which does not
    repeat it, for a password too short or too long for bcrypt."""
    if password != password.strip():
        raise AccountError("the password begins or ends with a space, which sign-in would drop; choose another")
    if len(password) < MIN_PASSWORD_CHARACTERS:
        raise AccountError(f"the password is shorter than {MIN_PASSWORD_CHARACTERS} characters; choose a longer one")
    if len(password.encode()) > MAX_PASSWORD_BYTES:
        raise AccountError(f"the password is longer than bcrypt reads ({MAX_PASSWORD_BYTES} bytes); choose a shorter one")
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode()


def password_matches(password: str, hashed: str) -> bool:
    """Whether `password` is the one `hashed` was made from."""
    try:
        return bcrypt.checkpw(password.encode(), hashed.encode())
    except ValueError:  # not a bcrypt hash
        return False


def new_secret() -> str:
    """A random key that signs the app's session cookies (256 bits)."""
    return secrets.token_hex(32)
