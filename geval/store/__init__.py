"""The SQLite store: `Store` (the only code that speaks SQL), its schema's migrations
(`schema`) and the rows a judgment becomes (`records`)."""

from geval.store.store import Store, default_store_path

__all__ = ["Store", "default_store_path"]
