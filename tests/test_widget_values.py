"""Widget values the script replaces (`studio.state.keep_valid`, Inspect's Jump to): sent to the browser, which
otherwise keeps showing what it last showed. AppTest has no browser; what it checks is the message that makes the
browser show a value (`set_value` with the value), as a chromium check found missing (2026-12-05)."""

from streamlit.testing.v1 import AppTest


def _aspects() -> None:
    import streamlit as st

    from studio import state

    options = ["quality", "safe"] if st.session_state.get("judge", "a") == "a" else ["safe"]
    state.keep_valid("aspect", options)
    st.selectbox("Aspect", options, key="aspect")


def test_a_value_no_longer_offered_is_replaced_in_the_browser_too():
    at = AppTest.from_function(_aspects)
    at.run()
    at.selectbox(key="aspect").set_value("quality").run()
    at.session_state["judge"] = "b"  # another judge, which asks only for safe
    at.run()
    box = at.selectbox(key="aspect")
    assert box.value == "safe"
    assert box.proto.set_value and box.proto.raw_value == "safe"  # deleted, the browser went on showing quality
