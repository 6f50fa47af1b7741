"""Eko: a self-hostable assistant server."""

__version__ = "0.1.0"
