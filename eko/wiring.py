"""Composition root: builds every service from Settings and hands them to the API or the CLI.

Nothing else constructs long-lived objects; tests pass their own providers or embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from eko.accounts.passwords import Passwords
from eko.accounts.service import Accounts
from eko.chat.admission import LocalLine
from eko.chat.chain_writer import build_chain_writer
from eko.chat.engine import ChatEngineParts, build_chat_engine
from eko.chat.engine.warmup import stable_prefixes, warm_up
from eko.chat.feedback import FeedbackService
from eko.chat.history_import import HistoryImport
from eko.chat.memory_context import ReaderRoom, memory_context_node
from eko.chat.memory_guard import GuardAutoLearn, MemoryGuardStage
from eko.chat.recovery import AnswerRecovery
from eko.chat.service import ChatService
from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko.events.build import build_event_bus
from eko.events.types import EventBus
from eko.events.vectors import EventChangeFeed
from eko.guard.conversation import ConversationGuard
from eko.guard.judge import GuardJudge
from eko.guard.replies import GuardLearning
from eko.guard.service import GuardService
from eko.jobs.after_reply import AfterReplyJobs
from eko.jobs.build import build_job_queue
from eko.jobs.maintenance import register_maintenance
from eko.jobs.publisher import JobEventPublisher
from eko.jobs.queue import JobQueue
from eko.jobs.registry import JobRegistry
from eko.jobs.turn_indexing import register_turn_indexing
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.lobby.service import Lobby, build_lobby
from eko.memory.service import Memory, build_memory
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.db_health import DatabaseHealthMonitor
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.vectors import VectorIndex, build_memory_index, build_vector_index
from eko.store.vectors.blas_threads import limit_blas_threads


@dataclass
class Services:
    settings: Settings
    database: Database
    prompts: PromptLibrary
    providers: Sequence[Provider]
    runtime: LLMRuntime
    embedder: Embedder
    vectors: VectorIndex
    chat: ChatService
    # Every piece of background work (after-reply hooks, periodic housekeeping).
    jobs: JobQueue
    # Live events for /v1/events (message.created, job.*).
    events: EventBus
    guard: GuardService
    # The guard's rules for conversations (serve, learn, ratings): what chat and staff
    # validation call.
    conversation_guard: ConversationGuard
    feedback: FeedbackService
    memory: Memory
    # The chat engine's parts: node registry, docs scopes, web search, paywall.
    engine: ChatEngineParts
    # Probes the database in the background; /health reads its last result.
    db_health: DatabaseHealthMonitor
    # The lobby's proactive side: activity summaries, reflections (eko/lobby/).
    lobby: Lobby
    # Histories imported into rooms: stored at once, indexed by a job (POST …/messages:import,
    # `eko rooms import`).
    history_import: HistoryImport
    # Sign-in with a password, the page's sessions, the first-run operator, invitations.
    accounts: Accounts
    # The index every search and write goes through: the collections of
    # EKO_VECTOR_MEMORY_COLLECTIONS (by default all a message searches) held in memory in front
    # of `vectors`; `vectors` itself when that setting is empty.
    memory_vectors: VectorIndex
    # Answers every stored message still owed one (after a crash, a database outage); a
    # server process starts it (eko/api/app.py).
    recovery: AnswerRecovery | None = None

    async def warm_up(self) -> int:
        """Prime the local model with the prompt heads every reply starts with."""
        prefixes = stable_prefixes(
            self.prompts,
            self.engine.nodes,
            persona=self.settings.default_persona,
            compact=self.engine.orchestrator.compact,
            writer_compact=self.engine.writer.compact,
            orchestrator=not self.engine.orchestrator.by_rules,
        )
        return await warm_up(self.providers, prefixes)

    async def aclose(self) -> None:
        # No new claims; accepted messages are answered before the process lets go of its
        # database (what is left owed is answered by the next start).
        if self.recovery is not None:
            await self.recovery.aclose()
        await self.chat.drain()
        # Running jobs get a grace period; unfinished ones stay queued for the next start.
        await self.jobs.aclose()
        await self.memory_vectors.aclose()
        await self.events.aclose()
        await self.db_health.aclose()
        await self.engine.aclose()
        for provider in self.providers:
            await provider.aclose()
        # Some embedders hold an HTTP client.
        close_embedder = getattr(self.embedder, "aclose", None)
        if close_embedder is not None:
            await close_embedder()
        await self.database.dispose()


def attach_memory(engine: ChatEngineParts, memory: Memory, settings: Settings) -> None:
    """The dual context (past summaries, facts, older turns) as node M of the chat engine, sized
    by what the writer's prompt leaves of the reader's budget."""
    engine.nodes.register(
        memory_context_node(
            memory.context,
            timeout_s=settings.chat_node_timeout_s,
            reader=ReaderRoom(engine.writer.reader_room, engine.writer.sent_chars),
        )
    )


def build_services(
    settings: Settings,
    *,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
    database: Database | None = None,
) -> Services:
    # The in-memory vector searches are small products: one BLAS thread, no spinning ones.
    limit_blas_threads()
    database = database or Database.from_settings(settings)
    prompts = PromptLibrary()
    runtime = LLMRuntime.from_settings(
        settings, DatabaseCallRecorder(database), providers=providers
    )
    embedder = embedder or build_embedder(settings)
    events = build_event_bus(settings, database)
    # Jobs that need a model wait (re-queued with backoff) while every provider is down.
    registry = JobRegistry(model_available=lambda: runtime.any_available)
    vectors = build_vector_index(database, settings)
    feed = EventChangeFeed(events)
    # Every search of a message (guard, turns, memory items, summaries, docs) goes through
    # the in-memory index; writes reach the database through it.
    memory_vectors = build_memory_index(vectors, settings, feed=feed, shared_feed=feed.shared)
    # The chat engine is the writer (orchestrator -> plan -> executor -> response writer).
    engine = build_chat_engine(
        settings=settings,
        database=database,
        runtime=runtime,
        prompts=prompts,
        embedder=embedder,
        vectors=memory_vectors,
    )
    guard = GuardService.from_settings(
        settings,
        database=database,
        vectors=memory_vectors,
        embedder=embedder,
        judge=GuardJudge(runtime, prompts, timeout_s=settings.guard_judge_timeout_s),
    )
    conversation_guard = ConversationGuard(
        guard,
        GuardLearning(
            guard,
            database,
            assistant_name=settings.assistant_name,
            shared_min_agreeing_users=settings.guard_shared_min_agreeing_users,
        ),
        assistant_name=settings.assistant_name,
        enabled=settings.guard_enabled,
        cacheable_intents=frozenset(settings.guard_cacheable_intents),
    )
    memory = build_memory(
        settings=settings,
        database=database,
        runtime=runtime,
        embedder=embedder,
        # The turn index's searches (one per message and sub-query) run in memory by default.
        vectors=memory_vectors,
        prompts=prompts,
    )
    attach_memory(engine, memory, settings)
    after_reply = AfterReplyJobs(
        database,
        [
            GuardAutoLearn(conversation_guard),
            # Memory extraction (facts/self/goals) and hierarchical summaries.
            *memory.after_reply_hooks(),
        ],
        max_attempts=settings.jobs_max_attempts,
    )
    after_reply.register(registry)
    queue_holder: list[JobQueue] = []

    async def prune_jobs(keep: timedelta) -> int:
        return await queue_holder[0].prune(keep)

    register_maintenance(
        registry,
        guard=guard if settings.guard_auto_prune else None,
        guard_cron=settings.guard_prune_cron,
        prune_jobs=prune_jobs,
        jobs_keep=timedelta(days=settings.jobs_keep_days),
        jobs_cron=settings.jobs_prune_cron,
    )
    lobby = build_lobby(
        settings=settings,
        database=database,
        runtime=runtime,
        items=memory.items,
        embedder=embedder,
        prompts=prompts,
        events=events,
    )
    lobby.register(
        registry, settings=settings, enqueue=lambda *a, **k: queue_holder[0].enqueue(*a, **k)
    )
    register_turn_indexing(
        registry,
        database=database,
        index=memory.context.indexer,
        events=events,
        batch=settings.memory_index_batch,
    )
    jobs = build_job_queue(settings, database, registry, listener=JobEventPublisher(events))
    queue_holder.append(jobs)
    chat = ChatService(
        database=database,
        # Reflexive messages through the chain (OL1 -> M1 -> M2), simple ones to the engine.
        writer=build_chain_writer(
            settings=settings,
            inner=engine.engine,
            database=database,
            runtime=runtime,
            prompts=prompts,
            memory=memory,
            docs=engine.docs,
            web=engine.web,
        ),
        settings=settings,
        after_reply=after_reply,
        jobs=jobs,
        events=events,
        recent=memory.context.recent,
        # In this order: the first short-circuit that returns a Draft answers (quota paywall
        # first, then the memory guard), before any model call.
        short_circuits=[
            engine.paywall,
            MemoryGuardStage(conversation_guard),
        ],
        # The context loader's reads share the session that reads the turn's window.
        readers=[engine.loader],
        local_line=LocalLine(
            lambda: getattr(runtime.answering_provider(), "gate", None),
            max_queue=settings.local_max_queue,
        ),
    )
    return Services(
        settings=settings,
        database=database,
        prompts=prompts,
        providers=runtime.providers,
        runtime=runtime,
        embedder=embedder,
        vectors=vectors,
        chat=chat,
        jobs=jobs,
        events=events,
        guard=guard,
        conversation_guard=conversation_guard,
        feedback=FeedbackService(database=database, guard=conversation_guard),
        memory=memory,
        engine=engine,
        db_health=DatabaseHealthMonitor(database),
        lobby=lobby,
        history_import=HistoryImport(
            database=database,
            jobs=jobs,
            events=events,
            max_messages=settings.import_max_messages,
            max_message_chars=settings.max_message_chars,
        ),
        accounts=Accounts(
            database,
            settings,
            Passwords(),
            default_free_quota_limit=settings.default_free_quota_limit,
        ),
        memory_vectors=memory_vectors,
        recovery=AnswerRecovery(
            database,
            chat,
            lease_s=settings.chat_answer_lease_s,
            poll_s=settings.chat_recovery_poll_s,
            sole_server=database.dialect == "sqlite",
        ),
    )
