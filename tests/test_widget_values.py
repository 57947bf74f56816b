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


def _sample_size() -> None:
    import streamlit as st

    from studio import state

    items = st.session_state.get("items", 60)
    st.number_input("Sample size", 1, items, key=state.start_at("size", min(20, items), lambda held: held <= items))


def test_a_number_beyond_a_smaller_datasets_range_is_set_back_to_its_default_in_the_browser_too():
    """Score's sample size and "At most", Inspect's range, the systems' labels per system (`state.start_at` with a
    validity test): 50 of a 60-item dataset held on a 12-item one."""
    at = AppTest.from_function(_sample_size)
    at.run()
    at.number_input(key="size").set_value(50).run()
    at.session_state["items"] = 12  # another dataset
    at.run()
    box = at.number_input(key="size")
    assert not at.exception and box.value == 12
    assert box.proto.set_value and box.proto.value == 12
