"""The opportunity path decided by rules (EKO_LOBBY_DECIDER=rules, the default with a small
local model): no model call decides; the model only writes the message, and a model that
fails or answers garbage leaves the lobby quiet, with the reason recorded."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from eko.config import Settings
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.lobby.service import Lobby
from eko.store.db import Database
from eko.store.lobby_models import Reflection
from eko.store.models import LLMCall, Message
from tests.lobby.kit import LobbyKit, Writer, make_lobby_kit


async def rules_lobby(database: Database, writer: Writer) -> tuple[LobbyKit, Lobby]:
    kit = await make_lobby_kit(database, model=writer, lobby_decider="rules")
    lobby = kit.lobby()
    assert lobby.opportunity.by_rules
    return kit, lobby


async def reflections(database: Database) -> list[Reflection]:
    async with database.session() as session:
        return list((await session.execute(select(Reflection))).scalars())


async def test_a_curiosity_being_discussed_is_asked_with_one_writing_call(
    database: Database,
) -> None:
    writer = Writer()
    kit, lobby = await rules_lobby(database, writer)
    goal_id = await kit.goal("Kraken FM", "C'est quoi exactement Kraken FM ?")
    await kit.goal("plan Max", "C'est quoi le plan Max ?")
    await kit.say("je vais bosser sur Kraken FM cet aprem", user=0)
    await kit.say("ok, tu me montres la nouvelle version après ?", user=1)
    await lobby.activity(kit.room.id)

    assert set(writer.prompts) == {"SummaryOutput", "OpportunityMessage"}
    prompt = writer.prompts["OpportunityMessage"][0]
    assert "C'est quoi exactement Kraken FM ?" in prompt and "plan Max" not in prompt
    assert "en français" in prompt and "je vais bosser sur Kraken FM" in prompt
    (reflection,) = await reflections(database)
    assert reflection.action == "message" and reflection.goal_id == goal_id
    assert reflection.meta["decided_by"] == "rules" and reflection.model_calls == 1
    async with database.session() as session:
        last = (
            (await session.execute(select(Message).order_by(Message.seq.desc()))).scalars().first()
        )
        purposes = set((await session.execute(select(LLMCall.purpose))).scalars())
    assert last is not None and last.role == "assistant" and last.meta["proactive"] is True
    # The model's "Eko:" before its own words is dropped.
    assert last.content == "Au fait, c'est quoi exactement Kraken FM ?"
    assert purposes == {"activity_summary", "reflection_opportunity_write"}
    assert (await kit.items.get(goal_id)).status == "asked"  # type: ignore[union-attr]


async def test_a_fact_answers_an_open_question_in_the_room_language(database: Database) -> None:
    writer = Writer()
    writer.message = "Eko: It's on Tuesday at 10."
    kit, lobby = await rules_lobby(database, writer)
    await kit.remember("fact", "team meeting", "The team meeting is on Tuesday at 10am")
    await kit.say("when is the team meeting again?", user=0)
    await kit.say("no idea, sorry", user=1)
    await lobby.activity(kit.room.id)
    prompt = writer.prompts["OpportunityMessage"][0]
    assert "The team meeting is on Tuesday at 10am" in prompt and "en anglais" in prompt
    assert "user0" in prompt and "when is the team meeting again?" in prompt
    (reflection,) = await reflections(database)
    assert reflection.action == "message" and reflection.goal_id is None


async def test_a_sensitive_moment_or_unrelated_chat_calls_no_model_after_the_summary(
    database: Database,
) -> None:
    writer = Writer()
    kit, lobby = await rules_lobby(database, writer)
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.say("Corentin a perdu son père hier", user=0)
    await kit.say("oh non, transmets-lui nos pensées", user=1)
    await lobby.activity(kit.room.id)
    assert set(writer.prompts) == {"SummaryOutput"}
    assert await reflections(database) == []


async def test_a_model_that_writes_garbage_leaves_the_lobby_quiet_and_frees_the_slot(
    database: Database,
) -> None:
    writer = Writer("not json at all", raw=True)
    kit, lobby = await rules_lobby(database, writer)
    await kit.goal("Kraken FM", "C'est quoi exactement Kraken FM ?")
    await kit.say("on relance Kraken FM ce soir ?", user=0)
    await lobby.activity(kit.room.id)
    (reflection,) = await reflections(database)
    assert reflection.action == "pass" and "wrote no message" in reflection.reason
    async with database.session() as session:
        roles = list((await session.execute(select(Message.role))).scalars())
    assert roles == ["user"]
    # The slot was given back: the next window may speak.
    writer.raw = False
    kit.clock.advance(minutes=11)
    await kit.say("Kraken FM est down ?", user=1)
    await lobby.activity(kit.room.id)
    assert [r.action for r in await reflections(database)].count("message") == 1


def test_auto_decides_by_rules_for_a_small_local_model_only() -> None:
    settings = Settings(_env_file=None)
    assert settings.lobby_decider == "auto"
    assert settings.lobby_decides_by_rules(primary_is_small=True)
    assert not settings.lobby_decides_by_rules(primary_is_small=False)
    assert (
        Settings(_env_file=None, lobby_decider="model").lobby_decides_by_rules(
            primary_is_small=True
        )
        is False
    )
    small = FunctionModel(lambda _r: "{}")
    assert LLMRuntime([small]).primary_is_small is False


class DeadWriter(Writer):
    """Summaries work; the writing call finds the provider down."""

    def __call__(self, request: ProviderRequest) -> str:
        if (request.json_schema or {}).get("title") == "OpportunityMessage":
            raise ConnectionError("provider down")
        return super().__call__(request)


async def test_a_dead_provider_at_the_writing_call_is_a_recorded_pass(database: Database) -> None:
    kit, lobby = await rules_lobby(database, DeadWriter())
    await kit.goal("Kraken FM", "C'est quoi exactement Kraken FM ?")
    await kit.say("on relance Kraken FM ce soir ?", user=0)
    done = await lobby.activity(kit.room.id)
    assert done.summary is not None and done.reflection is not None
    assert done.reflection.action == "pass"
    assert "wrote no message" in done.reflection.reason and "failed" in done.reflection.reason
    async with database.session() as session:
        roles = list((await session.execute(select(Message.role))).scalars())
    assert roles == ["user"]


async def test_two_windows_at_once_speak_once(database: Database) -> None:
    writer = Writer()
    kit, lobby = await rules_lobby(database, writer)
    await kit.goal("Kraken FM", "C'est quoi exactement Kraken FM ?")
    await kit.say("je bosse sur Kraken FM cet aprem", user=0)
    await asyncio.gather(lobby.activity(kit.room.id), lobby.activity(kit.room.id))
    async with database.session() as session:
        roles = list((await session.execute(select(Message.role))).scalars())
    assert roles.count("assistant") == 1
    assert len(writer.prompts["OpportunityMessage"]) == 1


async def test_a_message_that_answers_its_own_curiosity_is_replaced_by_the_curiosity(
    database: Database,
) -> None:
    """The bundled model sometimes answers the question it should ask ("Corentin est un
    professionnel…"): what was decided is posted in memory's words, and the metadata says so."""
    writer = Writer("Corentin est un professionnel de la communication.")
    kit, lobby = await rules_lobby(database, writer)
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.say("Corentin passe au bureau demain", user=0)
    done = await lobby.activity(kit.room.id)
    assert done.reflection is not None and done.reflection.action == "message"
    assert done.reflection.message == "Qui est Corentin ?"
    assert done.reflection.meta["written_by"] == "memory"
    assert done.reflection.meta["model_wrote"] == writer.message
    good = Writer("Au fait, qui est Corentin ?")
    kit2, lobby2 = await rules_lobby(database, good)
    await kit2.goal("Corentin", "Qui est Corentin ?")
    await kit2.say("Corentin passe au bureau demain", user=0)
    done2 = await lobby2.activity(kit2.room.id)
    assert done2.reflection is not None and done2.reflection.message == good.message
    assert done2.reflection.meta["written_by"] == "model"
