"""G-Eval Studio: does my LLM judge agree with people? Run with `streamlit run app.py`."""

import streamlit as st

from studio import auth, context, memory
from studio.state import configure_page, sidebar

memory.freed_blocks_returned()  # once per server process
configure_page()
user = auth.signed_in()  # None: no accounts, the app as one local user's; else signed in (the form stops the run until)
if user is not None and not user.lead:  # an annotator: their queue, and nothing else runs (studio/auth.py)
    auth.sign_out_button(user)
    auth.refuse_query(user)
    queue_only = st.navigation([st.Page(auth.MY_QUEUE, title="My queue", icon=":material/label:", default=True),
                                *[st.Page(auth.refusal(title, user), title=title, url_path=path, visibility="hidden")
                                  for path, title in auth.LEAD_PAGES.items()]])
    auth.refuse_address(user)  # after the navigation: its line links back to the queue
    queue_only.run()
    st.stop()
# A session's first run reads the dataset and draws the sidebar before the page: the main area says so
# meanwhile (it stayed blank for seconds on a loaded machine), and is cleared before the page draws. The
# placeholder is there in every run, so that the page's elements keep their places (a widget that moved
# between the first run and the next was drawn anew, and a file given to it then was lost).
opening = st.empty()
if "context_restored" not in st.session_state:
    opening.caption("Opening G-Eval Studio: reading the dataset…")
context.restore()  # a reload or a link: the URL's working context, before any widget is drawn
every_page = [
    st.Page("views/1_data.py", title="Data", icon=":material/table:", default=True),
    st.Page("views/2_prompts.py", title="Prompts", icon=":material/edit_note:", url_path="prompts"),
    st.Page("views/3_score.py", title="Score", icon=":material/play_circle:", url_path="score"),
    st.Page("views/4_inspect.py", title="Inspect", icon=":material/search:", url_path="inspect"),
    st.Page("views/5_agreement.py", title="Agreement", icon=":material/insights:", url_path="agreement"),
    st.Page("views/6_tune.py", title="Tune", icon=":material/tune:", url_path="tune"),
    st.Page("views/7_label.py", title="Label", icon=":material/label:", url_path="label"),
    *([st.Page("views/8_queues.py", title="Queues", icon=":material/groups:", url_path="queues"),
       st.Page("views/9_my_queue.py", title="My queue", icon=":material/assignment_ind:", url_path="my-queue")]
      if user is not None else []),
]
pages = st.navigation(every_page)
if user is not None:
    auth.open_asked(every_page, pages)
    auth.sign_out_button(user)
sidebar()
opening.empty()
context.publish()
try:
    pages.run()
finally:  # also after st.stop(): the URL names what the page now shows
    context.publish()
