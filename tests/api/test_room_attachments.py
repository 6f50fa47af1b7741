"""Files attached to a room: stored as the room's own docs scope, searched on its turns only."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from eko.store.chat_models import DocChunk, RoomAttachment
from eko.store.models import Embedding
from tests.api.conftest import Harness, HarnessFactory
from tests.chat.helpers import engine_model, known_user, orchestrator_json, send, writer_system
from tests.pdf_file import pdf_bytes

NOTES_MD = "# Notes\n\n## Vault\n\nThe vault code is MARMOTTE-77.\n"
REPORT_PDF = pdf_bytes(
    "Quarterly report.",
    "The budget for the lighthouse project is 4,200 euros.\nApproved in March.",
)


async def _attach(
    h: Harness,
    room_id: str,
    headers: dict[str, str],
    name: str,
    data: bytes,
    content_type: str,
) -> Any:
    return await h.client.post(
        f"/v1/rooms/{room_id}/attachments",
        files={"file": (name, data, content_type)},
        headers=headers,
    )


async def _stored(h: Harness) -> tuple[int, int, int]:
    """Attachment rows, doc chunks and doc-chunk vectors in the whole database."""
    async with h.services.database.session() as session:
        rows = await session.scalar(select(func.count()).select_from(RoomAttachment))
        chunks = await session.scalar(select(func.count()).select_from(DocChunk))
        vectors = await session.scalar(
            select(func.count()).select_from(Embedding).where(Embedding.collection == "doc_chunk")
        )
    return int(rows or 0), int(chunks or 0), int(vectors or 0)


async def test_attach_text_markdown_and_pdf_list_replace_and_delete(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, headers, room_id = await known_user(h)
        txt = await _attach(h, room_id, headers, "todo.txt", b"Buy milk.\n", "text/plain")
        assert txt.status_code == 201, txt.text
        assert txt.json()["content_type"] == "text/plain" and txt.json()["chunks"] == 1
        # A .md sent as text/plain (as many clients do) is read as Markdown.
        md = await _attach(h, room_id, headers, "notes.md", NOTES_MD.encode(), "text/plain")
        assert md.status_code == 201 and md.json()["content_type"] == "text/markdown"
        pdf = await _attach(h, room_id, headers, "report.pdf", REPORT_PDF, "application/pdf")
        assert pdf.status_code == 201, pdf.text
        body = pdf.json()
        assert body["filename"] == "report.pdf" and body["size_bytes"] == len(REPORT_PDF)
        assert body["chars"] > 60 and body["chunks"] >= 1
        listed = (await h.client.get(f"/v1/rooms/{room_id}/attachments", headers=headers)).json()
        assert [a["filename"] for a in listed] == ["todo.txt", "notes.md", "report.pdf"]

        # The same name again replaces the file: one row, its new text.
        again = await _attach(h, room_id, headers, "todo.txt", b"Buy bread.\n", "text/plain")
        assert again.status_code == 201
        listed = (await h.client.get(f"/v1/rooms/{room_id}/attachments", headers=headers)).json()
        assert sorted(a["filename"] for a in listed) == ["notes.md", "report.pdf", "todo.txt"]
        rows, chunks, vectors = await _stored(h)
        assert rows == 3 and chunks == vectors == sum(a["chunks"] for a in listed)

        gone = await h.client.delete(
            f"/v1/rooms/{room_id}/attachments/{body['id']}", headers=headers
        )
        assert gone.status_code == 204
        again_gone = await h.client.delete(
            f"/v1/rooms/{room_id}/attachments/{body['id']}", headers=headers
        )
        assert again_gone.status_code == 404
        assert again_gone.headers["content-type"].startswith("application/problem+json")
        listed = (await h.client.get(f"/v1/rooms/{room_id}/attachments", headers=headers)).json()
        assert sorted(a["filename"] for a in listed) == ["notes.md", "todo.txt"]
        rows, chunks, vectors = await _stored(h)
        assert rows == 2 and chunks == vectors == sum(a["chunks"] for a in listed)


async def test_bad_files_are_refused_and_nothing_is_stored(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()], attachment_max_bytes=2048) as h:
        _, headers, room_id = await known_user(h)
        cases = [
            ("photo.png", b"\x89PNG\r\n", "image/png", 415, "unsupported-attachment"),
            ("big.txt", b"a " * 1500, "text/plain", 413, "attachment-too-large"),
            ("empty.pdf", pdf_bytes(""), "application/pdf", 422, "unreadable-attachment"),
            ("broken.pdf", REPORT_PDF[:200], "application/pdf", 422, "unreadable-attachment"),
            ("fake.pdf", b"just text", "application/pdf", 422, "unreadable-attachment"),
            ("latin.txt", "café".encode("latin-1"), "text/plain", 422, "unreadable-attachment"),
            ("blank.md", b"  \n\n ", "text/markdown", 422, "unreadable-attachment"),
        ]
        for name, data, content_type, status, kind in cases:
            response = await _attach(h, room_id, headers, name, data, content_type)
            assert response.status_code == status, (name, response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            problem = response.json()
            assert problem["type"].endswith(kind), (name, problem)
            assert name in problem["detail"] or status == 422, problem
        # What a person reads says why.
        empty = await _attach(h, room_id, headers, "e.pdf", pdf_bytes(""), "application/pdf")
        assert "no text found in the PDF" in empty.json()["detail"]
        # A body far over the limit is refused before it is read.
        huge = await _attach(h, room_id, headers, "huge.txt", b"x" * 200_000, "text/plain")
        assert huge.status_code == 413 and "EKO_ATTACHMENT_MAX_BYTES" in huge.json()["detail"]
        # No file field at all.
        missing = await h.client.post(
            f"/v1/rooms/{room_id}/attachments", data={"x": "1"}, headers=headers
        )
        assert missing.status_code == 422
        assert await _stored(h) == (0, 0, 0)
        assert (
            await h.client.get(f"/v1/rooms/{room_id}/attachments", headers=headers)
        ).json() == []


async def test_attachments_belong_to_their_room_only(make_harness: HarnessFactory) -> None:
    model = engine_model()
    async with make_harness(providers=[model]) as h:
        _, alice, alice_room = await known_user(h, "alice")
        _, bob, bob_room = await known_user(h, "bob")
        _, staff = await h.user("root", role="staff")
        created = await _attach(
            h, alice_room, alice, "notes.md", NOTES_MD.encode(), "text/markdown"
        )
        assert created.status_code == 201
        attachment_id = created.json()["id"]
        scope = f"room.{alice_room}"

        # Bob neither sees, adds to, nor removes from Alice's room.
        assert (
            await h.client.get(f"/v1/rooms/{alice_room}/attachments", headers=bob)
        ).status_code == 404
        assert (await _attach(h, alice_room, bob, "x.txt", b"x", "text/plain")).status_code == 404
        removed = await h.client.delete(
            f"/v1/rooms/{alice_room}/attachments/{attachment_id}", headers=bob
        )
        assert removed.status_code == 404
        # An id from another room is not found in one's own.
        mine = await h.client.delete(
            f"/v1/rooms/{bob_room}/attachments/{attachment_id}", headers=bob
        )
        assert mine.status_code == 404
        # The shared docs routes never show or touch a room's scope.
        assert (await h.client.get("/v1/docs/scopes", headers=bob)).json() == []
        hits = await h.client.get(
            "/v1/docs/search", headers=bob, params={"q": "vault code", "scope": scope}
        )
        assert hits.status_code == 200 and hits.json() == []
        ingest = await h.client.post(
            f"/v1/docs/scopes/{scope}/documents",
            headers=staff,
            json={"source": "evil.md", "text": "Overwritten."},
        )
        assert ingest.status_code == 422
        assert (await h.client.delete(f"/v1/docs/scopes/{scope}", headers=staff)).status_code == 404

        # Bob's turn never gets Alice's file; Alice's does.
        bob_reply = (await send(h, bob_room, bob, "What is the vault code?"))["assistant_message"]
        assert "MARMOTTE-77" not in writer_system(model)
        assert bob_reply["metadata"]["docs"]["scopes"] == []
        await send(h, alice_room, alice, "What is the vault code?")
        assert "MARMOTTE-77" in writer_system(model)
        assert (await h.client.get(f"/v1/rooms/{alice_room}/attachments", headers=alice)).json()


async def test_a_question_gets_the_attached_text_and_shared_scopes_still_count(
    make_harness: HarnessFactory,
) -> None:
    # The model picks the shared scope "product"; the room's files are searched as well.
    model = engine_model(
        orchestrator_json("functional_question", scope_need=True, scopes=["product"])
    )
    async with make_harness(providers=[model]) as h:
        _, staff = await h.user("root", role="staff")
        shared = await h.client.post(
            "/v1/docs/scopes/product/documents",
            headers=staff,
            json={"source": "guide.md", "text": "# Guide\n\nThe Pro plan costs 12 euros."},
        )
        assert shared.status_code == 201
        _, headers, room_id = await known_user(h)
        pdf = await _attach(h, room_id, headers, "report.pdf", REPORT_PDF, "application/pdf")
        assert pdf.status_code == 201
        reply = (
            await send(h, room_id, headers, "What does the attached report say about the budget?")
        )["assistant_message"]
        system = writer_system(model)
        assert "lighthouse project is 4,200 euros" in system
        assert "[attached file · report.pdf]" in system
        assert "12 euros" in system
        meta = reply["metadata"]
        assert meta["docs"]["scopes"] == [f"room.{room_id}", "product"]
        assert meta["docs"]["used"] is True
        assert "room_attachments" in meta["orchestrator"]["rules_applied"]
        # The room's scope is not offered to the model as a shared one.
        schema = model.requests[0].json_schema
        assert schema is not None
        enum = schema["$defs"]["OrchestratorPayload"]["properties"]["scopes_selected"]
        assert enum["items"]["enum"] == ["product"]

        # Once the last file is removed, the room's scope goes and the next turn is as before.
        await h.client.delete(
            f"/v1/rooms/{room_id}/attachments/{pdf.json()['id']}", headers=headers
        )
        reply = (await send(h, room_id, headers, "And the budget again?"))["assistant_message"]
        assert "4,200 euros" not in writer_system(model)
        assert reply["metadata"]["docs"]["scopes"] == ["product"]


async def test_deleting_the_room_deletes_its_attachments_and_vectors(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, headers, room_id = await known_user(h)
        await _attach(h, room_id, headers, "report.pdf", REPORT_PDF, "application/pdf")
        assert (await _stored(h))[0] == 1
        assert (await h.client.delete(f"/v1/rooms/{room_id}", headers=headers)).status_code == 204
        assert await _stored(h) == (0, 0, 0)
