"""Grounded answers about the user (docs/grounding.md).

A question about the user's own life or the people in it ("what instruments does my sister
play?", "où j'habite ?") is detected by rules (personal.py, word lists in
personal_words.json); when nothing the writer was given (facts, profile, the recent window,
recalled memory) mentions its subject (memory.py), the writer's prompt says so (a note from
eko/prompts/writer/grounding/), and the reply is checked after the writer (check.py): one
that claims to know is replaced by an "I don't know — tell me?" answer. What happened is
recorded in the reply's metadata (report.py).
"""
