"""Prompt and persona files. Text lives in files here, never in Python strings."""
