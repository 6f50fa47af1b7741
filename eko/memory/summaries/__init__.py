"""Hierarchical summaries L1…Ln of a room (see builder.py for the rules).

    builder.py   SummaryBuilder: catch a room up, level by level; SummaryHook (after a reply)
    segments.py  finding the next segment to summarize, from what is stored
    calls.py     the model calls that summarize one segment (map, then reduce)
    store.py     writing one summary, its parents, topics and vector in one transaction
    reads.py     listing and searching a room's summaries

Callers import from the module that defines what they use.
"""
