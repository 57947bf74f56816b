"""Sign-in, when the store has accounts (`geval users add`), and what each role may open.

With no account the app is one local user's, as it always was: no sign-in, every page. With
accounts, every visitor signs in through streamlit-authenticator: its form checks the password
against the bcrypt hash the store keeps (`Store.password_hashes`; the password goes nowhere else),
and it sets a session cookie signed (a JWT, HS256) with the store's own key (`Store.session_key`),
so that a reload stays signed in until "Sign out" or the cookie's expiry. The role is read from the
store on every run: an account removed or made an annotator meanwhile loses its pages at once.

A lead sees every page. An annotator's navigation holds their queue only (`views/9_my_queue.py`):
every other page's address is a hidden page that refuses in one line, a query parameter is refused
likewise and dropped, and nothing of the dataset's scores, the judge or another person's labels is
drawn for them (the sidebar, the working context in the URL and the other pages never run).

Streamlit's own `st.login` (OpenID Connect: Google, Microsoft, Okta, Auth0 ...) is the alternative where
such a provider is configured in .streamlit/secrets.toml: docs/team.md says how to map its users to roles.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

import geval
from studio import state

COOKIE = "geval_session"
#: The page (url path) a visitor asked for before the sign-in form, opened once signed in (`first_page`); and
#: whether this run is the one that signs in.
ASKED, SIGNING_IN = "page_asked_before_sign_in", "signing_in"
COOKIE_DAYS = 7.0
USER = "signed_in_user"
#: An annotator's one page.
MY_QUEUE = "views/9_my_queue.py"
#: Pages an annotator may not open: url path -> its title.
LEAD_PAGES = {"data": "Data", "prompts": "Prompts", "score": "Score", "inspect": "Inspect", "agreement": "Agreement",
              "tune": "Tune", "label": "Label", "queues": "Queues"}
FIELDS = {"Form name": "Sign in to G-Eval Studio", "Username": "Name", "Password": "Password", "Login": "Sign in"}


@dataclass(frozen=True)
class User:
    """Who is signed in, and their role ("lead" or "annotator")."""

    name: str
    role: str

    @property
    def lead(self) -> bool:
        return self.role == "lead"


def _authenticator(store: geval.Store):
    """streamlit-authenticator over the store's accounts (hashes only), its cookie signed with the store's key."""
    import streamlit_authenticator as stauth

    accounts = {name: {"name": name, "password": hashed, "roles": [role], "email": ""}
                for name, (role, hashed) in store.password_hashes().items()}
    return stauth.Authenticate({"usernames": accounts}, COOKIE, store.session_key(), COOKIE_DAYS, auto_hash=False)


def signed_in() -> User | None:
    """The user signed in; None when the store has no account (the app as one local user's). While
    nobody is signed in, draws the sign-in form and stops the run.

    The form and its cookie's components are drawn in a place of their own at the top of the page, there
    (empty) in every run: the run that signs someone in goes on to draw the page below them, and the next
    run (the cookie's component answers) draws it without them, so the page must keep its places. Else a
    fragment of the page (My queue's labeling unit) run in between names its place in the first run, which
    the browser no longer has ("Bad delta path index"), and the page stops answering."""
    store = state.store()
    roles = store.users()
    if not roles:
        return None
    form = st.empty()
    name = st.session_state.get("username") if st.session_state.get("authentication_status") else None
    if name is None and not st.session_state.get("logout"):  # a new session: the signed cookie, read here
        name = cookie_user(store, st.context.cookies.get(COOKIE))
        if name in roles:
            st.session_state.update(authentication_status=True, username=name, name=name)
        elif st.context.cookies.get(COOKIE):  # refused (signed out since, expired, another store's): the form
            st.session_state["logout"] = True  # does not read it either (streamlit-authenticator's flag)
    st.session_state[SIGNING_IN] = name not in roles or bool(st.session_state.get("sign_out"))
    if st.session_state[SIGNING_IN]:
        st.session_state.setdefault(ASKED, _url_page())  # the run that signs in names no page: remembered here
        with form.container():
            _sign_in_form(store, roles)  # stops the run until someone signs in
        name = st.session_state["username"]
    st.session_state[USER] = User(name, roles[name])
    return st.session_state[USER]


def cookie_user(store: geval.Store, token: str | None) -> str | None:
    """The name a session cookie's `token` carries, when it is signed with the store's key, not expired, and
    made after that account last signed out (`Store.signed_out`: "Sign out" ends the session on the server,
    also where the browser kept the cookie). Read on the server (from the request that opened the session):
    no component, so a new session's first run is not cut short by one's answer, which would name no page
    (a link would open the default page)."""
    import jwt

    if not token:
        return None
    try:
        claims = jwt.decode(token, store.session_key(), algorithms=["HS256"])
    except jwt.PyJWTError:
        return None
    name, expires = claims.get("username"), float(claims.get("exp_date", 0))
    made = expires - COOKIE_DAYS * 86400  # streamlit-authenticator sets it to expire COOKIE_DAYS after it is made
    return name if isinstance(name, str) and expires > time.time() and made > store.signed_out(name) else None


def _sign_in_form(store: geval.Store, roles: dict[str, str]) -> None:
    """streamlit-authenticator's form (its component sets the cookie on sign-in, deletes it on sign-out);
    stops the run while nobody is signed in."""
    import streamlit_authenticator as stauth

    authenticator = _authenticator(store)
    if st.session_state.get("sign_out"):  # the button's run: the cookie is deleted in this run's browser
        st.session_state["sign_out"] = False
        if st.session_state.get("authentication_status"):
            store.sign_out(st.session_state["username"])
            authenticator.logout(location="unrendered")
    try:
        authenticator.login(location="main", fields=FIELDS, key="sign_in")
    except (stauth.utilities.LoginError, KeyError):  # a cookie of an account removed since: sign in again
        st.session_state["authentication_status"] = None
        st.error("Your account is not known here any more: sign in again, or ask the lead.")
    name = st.session_state.get("username") if st.session_state.get("authentication_status") else None
    if name not in roles:
        if st.session_state.get("authentication_status") is False:
            st.error("That name and password do not match an account.")
        st.caption("This G-Eval Studio has accounts: sign in with the name and password the lead gave you.")
        st.stop()
    st.session_state[USER] = User(name, roles[name])
    return st.session_state[USER]


def current() -> User | None:
    """Who is signed in on this run (None: the store has no accounts); set by `signed_in` before any page runs."""
    return st.session_state.get(USER) if state.store().users() else None


def sign_out_button(user: User) -> None:
    """The sidebar's line saying who is signed in, and "Sign out"."""
    with st.sidebar:
        st.caption(f"Signed in as **{user.name}** ({user.role})")
        st.button("Sign out", key="sign_out_button", on_click=lambda: st.session_state.update(sign_out=True))


def refusal(title: str, user: User):
    """The hidden page an annotator meets at a lead's page's address: one line, nothing else."""
    def refuse() -> None:
        st.error(f"The {title} page is for the lead: you are signed in as {user.name}, an annotator, and see your "
                 "own queue only.")
        st.page_link(MY_QUEUE, label="Back to my queue")
    refuse.__name__ = f"refused_{title.lower()}"
    return refuse


def no_team(title: str):
    """The hidden page a team page's address (a queue's link) opens on a store with no accounts: one line saying
    what a team needs, instead of Streamlit's "Page not found" and the main page."""
    def unavailable() -> None:
        st.title(title)
        st.info(f"The {title} page is for a team: this store has no accounts yet. The lead adds them with `python -m "
                "geval users add NAME --role lead` (and `--role annotator` for each annotator); then everyone signs "
                "in, and each annotator labels their own queue. See docs/team.md.")
        st.page_link("views/1_data.py", label="Go to Data", icon=":material/table:")
    unavailable.__name__ = f"no_team_{title.lower().replace(' ', '_')}"
    return unavailable


def _url_page() -> str:
    """The page the browser's address names (its url path's last part; "" for the default page)."""
    return urlsplit(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]


def first_page(otherwise: str) -> str | None:
    """The url path of the page a link named before its sign-in form, in the run that signs in (`otherwise` when
    the link named none) and in the run after it; None in any other run. The app's navigation makes it the default
    page of those runs. The run that signs in names no page and so opens the default: a switch there would cut the
    run short before the cookie's component is drawn (the cookie lost), and a switch in the run after it (the
    component's answer) left the default page open when that run never came. The run after it may name no page
    either: on a busy machine the component answered before the browser had heard of the page, and the lead who
    followed a link to Label was shown Data. Let go after that run: the browser names the page it shows from then
    on."""
    if st.session_state.get(SIGNING_IN):
        return st.session_state.get(ASKED) or otherwise
    return st.session_state.pop(ASKED, None) or None


def refuse_address(user: User) -> None:
    """A lead page's address opened by an annotator (a link, a bookmark, typed): refused in one line and
    the run stopped, whatever page Streamlit would fall back to (a new session's first run may name the
    page by an old script hash, which resolves to the default page)."""
    st.session_state.pop(ASKED, None)  # their queue, whatever they asked for
    page = _url_page()
    if page in LEAD_PAGES:
        refusal(LEAD_PAGES[page], user)()
        st.stop()


def refuse_query(user: User) -> None:
    """An annotator's URL carries no working context: a query parameter is refused in one line and dropped. Said
    as a toast: a line on the page stayed above the queue through every label (its fragment's reruns)."""
    if st.query_params:
        names = ", ".join(sorted(st.query_params.keys()))
        st.query_params.clear()
        st.toast(f"The link's settings ({names}) are for the lead's pages: you are signed in as {user.name}, an "
                 "annotator, and see your own queue only.", icon=":material/link_off:", duration="long")
