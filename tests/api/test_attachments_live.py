"""A PDF attached over real sockets reaches the writer's prompt of the next question."""

from __future__ import annotations

import httpx

from tests.api.live_server import running_eko
from tests.chat.helpers import engine_model, writer_system
from tests.pdf_file import pdf_bytes


def test_a_pdf_attached_to_a_live_server_is_in_the_writers_prompt(database_url: str) -> None:
    model = engine_model(writer="Le document dit que la cabane est bleue.")
    pdf = pdf_bytes("Inventory of the garden.", "The garden shed is painted ultramarine blue.")
    with (
        running_eko(database_url, [model]) as eko,
        httpx.Client(base_url=eko.url, headers=eko.headers, timeout=30) as client,
    ):
        room = client.post("/v1/rooms", json={"kind": "direct"}).json()["id"]
        attached = client.post(
            f"/v1/rooms/{room}/attachments",
            files={"file": ("garden.pdf", pdf, "application/pdf")},
        )
        assert attached.status_code == 201, attached.text
        assert attached.json()["filename"] == "garden.pdf"
        refused = client.post(
            f"/v1/rooms/{room}/attachments",
            files={"file": ("scan.pdf", pdf_bytes(""), "application/pdf")},
        )
        assert refused.status_code == 422
        assert refused.headers["content-type"].startswith("application/problem+json")

        reply = client.post(
            f"/v1/rooms/{room}/messages",
            json={"content": "What colour is the garden shed in the attached document?"},
        )
        assert reply.status_code == 201, reply.text
        assert reply.json()["assistant_message"]["content"].startswith("Le document dit")
    system = writer_system(model)
    assert "garden shed is painted ultramarine blue" in system
    assert "[attached file · garden.pdf]" in system
