"""The lobby: mentions, activity summaries, reflection (the assistant speaking up on its own)."""
