"""Live events: one bus (in-process, or PostgreSQL LISTEN/NOTIFY across processes) feeding the
WebSocket / Server-Sent Events endpoint `/v1/events`."""
