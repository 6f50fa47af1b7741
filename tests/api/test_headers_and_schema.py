"""Security headers on the page, the API and its docs; the OpenAPI schema documents every
problem an operation answers; malformed bodies and odd request ids."""

from __future__ import annotations

import json
import re
from typing import Any

from eko.api.app import create_app
from eko.api.security_headers import PAGE_POLICY
from eko.config import Settings
from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"


def _assert_security_headers(response: Any) -> str:
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    policy: str = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    return policy


async def test_security_headers_on_the_page_and_the_api(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        page = await h.client.get("/")
        script = await h.client.get("/static/app.js")
        me = await h.client.get("/v1/me", headers=headers)
        missing_key = await h.client.get("/v1/me")
        not_found = await h.client.get("/v1/rooms/nope", headers=headers)
        nul = await h.client.get("/v1/rooms/a%00")
    assert page.status_code == 200 and "<script src=" in page.text
    policy = _assert_security_headers(page)
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy
    # The page must work under its policy: no inline script, no inline style.
    assert "<script>" not in page.text and "style=" not in page.text and "<style" not in page.text
    for response in (script, me, missing_key, not_found, nul):
        assert _assert_security_headers(response) == policy
    assert (me.status_code, missing_key.status_code, not_found.status_code) == (200, 401, 404)


async def test_api_docs_get_the_headers_and_still_no_inline_script(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        pages = [await h.client.get("/docs"), await h.client.get("/redoc")]
        init = await h.client.get("/docs/swagger-init.js")
    for page in pages:
        assert page.status_code == 200
        policy = _assert_security_headers(page)
        assert "script-src 'self';" in policy  # scripts: Eko's own files only, even here
        for attributes, body in re.findall(r"<script\b([^>]*)>(.*?)</script>", page.text, re.S):
            assert "src=" in attributes and not body.strip()
    # Swagger UI runs under the page's own policy; ReDoc needs inline styles and a worker.
    assert _assert_security_headers(pages[0]) == PAGE_POLICY
    assert _assert_security_headers(init) == PAGE_POLICY
    assert "style-src 'self' 'unsafe-inline'" in _assert_security_headers(pages[1])


# --- the OpenAPI document describes every error response ---


OPENAI_COMPATIBLE = {
    "/v1/models",
    "/v1/models/{model}",
    "/v1/chat/completions",
    "/v1/embeddings",
}
# The ways in, open to anyone (eko/api/routers/auth.py, invitations.py): no key, no 401
# (sign-in's 401 is a refused password, documented there).
PUBLIC = {
    "/v1/auth/setup",
    "/v1/auth/session",
    "/v1/auth/signin",
    "/v1/auth/signout",
    "/v1/invite/{token}",
}


async def test_every_operation_documents_its_problem_responses(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        spec = (await h.client.get("/openapi.json")).json()
    problem_ref = {"$ref": "#/components/schemas/ProblemDetails"}
    assert "ProblemDetails" in spec["components"]["schemas"]
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    operations = [
        (path, method, op) for path, item in spec["paths"].items() for method, op in item.items()
    ]
    assert len(operations) > 30
    for path, method, op in operations:
        if path in OPENAI_COMPATIBLE:
            # OpenAI's error shape there, those of the middleware too (eko/api/openai_errors.py).
            for status in ("413", "422", "503"):
                assert "application/json" in op["responses"][status]["content"], (path, status)
            continue
        for status in ("400", "413", "422", "503"):
            assert op["responses"][status]["content"] == {PROBLEM: {"schema": problem_ref}}
        if path not in PUBLIC:
            assert ("401" in op["responses"]) == path.startswith("/v1"), (method, path)
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")):
                assert list(response["content"]) == [PROBLEM], (method, path, status)
    assert "Retry-After" in spec["paths"]["/health"]["get"]["responses"]["503"]["headers"]
    staff_list = spec["paths"]["/v1/staff/memory"]["get"]["responses"]
    assert "403" in staff_list
    validate = spec["paths"]["/v1/staff/memory/validate"]["post"]["responses"]
    assert {"200", "201"} <= validate.keys()


def test_the_openai_route_documents_its_body_and_answers() -> None:
    """/v1/chat/completions reads its body itself (OpenAI-shaped 400s), so FastAPI does not
    describe it: the document does all the same, and schemathesis fuzzes it from there."""
    spec = create_app(Settings(_env_file=None), migrate=False).openapi()
    operation = spec["paths"]["/v1/chat/completions"]["post"]
    body = operation["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"model", "messages"}
    message = schema["properties"]["messages"]["items"]
    assert "$ref" not in json.dumps(schema)  # nothing to resolve from the document's root
    assert message["properties"]["role"]["enum"][:4] == ["system", "developer", "user", "assistant"]
    responses = operation["responses"]
    assert set(responses["200"]["content"]) == {"application/json", "text/event-stream"}
    assert responses["200"]["headers"]["X-Eko-Room"]["required"] is True
    completion = responses["200"]["content"]["application/json"]["schema"]
    assert completion["properties"]["object"] == {"const": "chat.completion"}
    # The middleware's and FastAPI's (413, 422, 503) too: in OpenAI's shape on this route.
    for status in ("400", "401", "404", "413", "422", "429", "503"):
        assert "error" in responses[status]["content"]["application/json"]["schema"]["required"]
    assert "Retry-After" in responses["503"]["headers"]


async def test_an_odd_request_id_is_replaced_not_echoed(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        odd = await h.client.get("/health", headers={"X-Request-ID": "a b\tc<script>"})
        plain = await h.client.get("/health", headers={"X-Request-ID": "req-42"})
    assert re.fullmatch(r"[0-9a-f]{32}", odd.headers["x-request-id"])
    assert plain.headers["x-request-id"] == "req-42"


# --- terminal output ---
