"""G-Eval Studio: does my LLM judge agree with people? Run with `streamlit run app.py`."""

import streamlit as st

from studio.state import sidebar

st.set_page_config(page_title="G-Eval Studio", page_icon=":material/balance:", layout="wide")
pages = st.navigation([
    st.Page("pages/1_data.py", title="Data", icon=":material/table:", default=True),
    st.Page("pages/2_prompts.py", title="Prompts", icon=":material/edit_note:"),
    st.Page("pages/3_score.py", title="Score", icon=":material/play_circle:"),
    st.Page("pages/4_inspect.py", title="Inspect", icon=":material/search:"),
    st.Page("pages/5_agreement.py", title="Agreement", icon=":material/insights:"),
])
sidebar()
pages.run()
