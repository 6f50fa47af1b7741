"""Request and response bodies of the HTTP API, one module per family of routes.

    inputs.py   what every body's text and JSON must be to be stored (InputText, InputJson)
    rooms.py    users, rooms, members, messages, model calls
    chat.py     the chat engine's routes (chat message, quota, profile, docs)
    chain.py    POST /v1/chat (the reflexive chain's shape)
    guard.py    message feedback and the staff cache audit
    memory.py   memory items, summaries, topics, context
    openai.py   the OpenAI-compatible API

Routers import each body from the module that defines it.
"""
