"""G-Eval Studio: does my LLM judge agree with people? Run with `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="G-Eval Studio", page_icon="⚖️", layout="wide")  # an emoji: drawn here, not fetched
# A session's first run imports the engine (seconds, on a server's first session), reads the dataset and draws the
# sidebar before the page: the main area says so meanwhile (it stayed blank for seconds on a loaded machine), and
# is cleared before the page draws. The placeholder is there in every run, so that the page's elements keep their
# places (a widget that moved between the first run and the next was drawn anew, and a file given to it was lost).
opening = st.empty()
first_run = "context_restored" not in st.session_state
if first_run:
    opening.caption("Opening G-Eval Studio…")

from studio import auth, context, fitting, memory, state  # noqa: E402 (after the first thing drawn)

memory.freed_blocks_returned()  # once per server process
opening.empty()  # a sign-in form or an annotator's queue draws below nothing
user = auth.signed_in()  # None: no accounts, the app as one local user's; else signed in (the form stops the run until)
if user is not None and not user.lead:  # an annotator: their queue, and nothing else runs (studio/auth.py)
    auth.sign_out_button(user)
    auth.refuse_query(user)
    queue_only = st.navigation([st.Page(auth.MY_QUEUE, title="My queue", icon=":material/label:", default=True),
                                # a queue's link (/my-queue) answered "Page not found": the default is served at / only
                                st.Page(auth.MY_QUEUE, title="My queue", url_path="my-queue", visibility="hidden"),
                                *[st.Page(auth.refusal(title, user), title=title, url_path=path, visibility="hidden")
                                  for path, title in auth.LEAD_PAGES.items()]])
    auth.refuse_address(user)  # after the navigation: its line links back to the queue
    queue_only.run()
    st.stop()
if first_run:
    opening.caption("Opening G-Eval Studio: reading the dataset…")
context.restore()  # a reload or a link: the URL's working context, before any widget is drawn
#: The lead's pages: (script, title, icon, url path); Queues and My queue where the store has accounts.
PAGES = [("views/1_data.py", "Data", ":material/table:", "data"),
         ("views/7_label.py", "Label", ":material/label:", "label"),  # second, as the Data page's steps
         ("views/2_prompts.py", "Prompts", ":material/edit_note:", "prompts"),
         ("views/3_score.py", "Score", ":material/play_circle:", "score"),
         ("views/4_inspect.py", "Inspect", ":material/search:", "inspect"),
         ("views/5_agreement.py", "Agreement", ":material/insights:", "agreement"),
         ("views/6_tune.py", "Tune", ":material/tune:", "tune")]
TEAM_PAGES = [("views/8_queues.py", "Queues", ":material/groups:", "queues"),
              ("views/9_my_queue.py", "My queue", ":material/assignment_ind:", "my-queue")]
offered = PAGES + (TEAM_PAGES if user is not None else [])
first = auth.first_page("data") if user is not None else None  # the run that signs in: the page a link named
first = first if first is None or first in {url_path for *_, url_path in offered} else "data"
by_path = {url_path: st.Page(script, title=title, icon=icon, url_path=url_path, default=url_path == first)
           for script, title, icon, url_path in offered}
# The app's root opens Data at its own address: Streamlit serves the default page at the root only, so Data as the
# default answered /data with "Page not found". Not in the run that signs in, which a switch would cut short.
root = st.Page(lambda: st.switch_page(by_path["data"]), title="Data", url_path="start", visibility="hidden",
               default=first is None)
# a team page's address (a queue's link) on a store with no accounts: one line on what a team needs
absent = [st.Page(auth.no_team(title), title=title, url_path=url_path, visibility="hidden")
          for _, title, _, url_path in TEAM_PAGES] if user is None else []
pages = st.navigation([root, *by_path.values(), *absent])
if user is not None:
    auth.sign_out_button(user)
fitting.editor_follows(state.store(), state.dataset())  # the editor's template fits the dataset, until the user picks
state.sidebar()
opening.empty()
context.publish()
if pages is not root:
    context.show_notes()
try:
    pages.run()
finally:  # also after st.stop(): the URL names what the page now shows
    context.publish()
