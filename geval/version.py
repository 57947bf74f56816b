"""The package version, written last in every judge signature."""

__version__ = "0.2.0"
