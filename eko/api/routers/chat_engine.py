"""Every route of the chat engine, under one router for create_app."""

from __future__ import annotations

from fastapi import APIRouter

from eko.api.routers import chat, chat_profile, docs

router = APIRouter()
router.include_router(chat.router)
router.include_router(chat_profile.router)
router.include_router(docs.router)
