"""G-Eval Studio: does my LLM judge agree with people? Run with `streamlit run app.py`."""

import streamlit as st

from studio.state import configure_page, run_framed, sidebar

configure_page()
pages = st.navigation([
    st.Page("pages/1_data.py", title="Data", icon=":material/table:", default=True),
    st.Page("pages/2_prompts.py", title="Prompts", icon=":material/edit_note:"),
    st.Page("pages/3_score.py", title="Score", icon=":material/play_circle:"),
    st.Page("pages/4_inspect.py", title="Inspect", icon=":material/search:"),
    st.Page("pages/5_agreement.py", title="Agreement", icon=":material/insights:"),
])
sidebar()
run_framed(pages)
