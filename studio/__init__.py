"""Streamlit glue shared by app.py and the pages: session state, the sidebar, background jobs.

Pages import `geval` for all work and `studio` only for the current dataset, template,
judge and store of this browser session.
"""
