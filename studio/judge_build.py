"""The Score page's line about the embedded judge's llama.cpp while it is built in the background
(a new machine's first command starts the build): redrawn every few seconds until the build ends,
then the page is drawn again with the judge ready."""

from __future__ import annotations

import streamlit as st


def embedded_ready(judge) -> bool:
    """Whether the embedded `judge` can run (llama-cpp-python installed); if not, its build's line is
    shown: where it is, why it failed, or how to start it."""
    if judge.build().state == "installed":
        return True
    _build_line(judge)
    return False


@st.fragment(run_every=5.0)
def _build_line(judge) -> None:
    now = judge.build()
    if now.state == "installed":  # ended while the page was open: Start becomes available
        st.rerun(scope="app")
    (st.error if now.state == "failed" else st.info)(now.line(), icon=":material/build:")
