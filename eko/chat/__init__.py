"""The message pipeline: from a stored user message to a stored assistant reply."""
