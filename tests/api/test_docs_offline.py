"""/docs and /redoc work offline: every asset they load is served by Eko itself, and they run
no inline script (so a `script-src 'self'` policy does not blank them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

ASSET = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"')
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.DOTALL)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_pages_load_only_local_assets(
    make_harness: Callable[..., Any], backend: str, page: str
) -> None:
    if backend != "sqlite":
        pytest.skip("static pages: the database backend plays no part")
    async with make_harness() as harness:
        response = await harness.client.get(page)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        html = response.text
        assets = ASSET.findall(html)
        assert assets, html
        for url in assets:
            assert url.startswith("/") and not url.startswith("//"), url  # same origin
            asset = await harness.client.get(url)
            assert asset.status_code == 200, url
            assert len(asset.content) > 100, url  # a real bundle, not an empty file
        for attributes, body in SCRIPT.findall(html):
            assert "src=" in attributes and not body.strip(), "inline script"
        assert "/openapi.json" in html
        assert (await harness.client.get("/openapi.json")).status_code == 200


async def test_swagger_is_started_by_a_script_that_reads_the_schema_url(
    make_harness: Callable[..., Any], backend: str
) -> None:
    if backend != "sqlite":
        pytest.skip("static pages: the database backend plays no part")
    async with make_harness() as harness:
        html = (await harness.client.get("/docs")).text
        assert 'data-openapi-url="/openapi.json"' in html
        assert "/static/docs/swagger-ui-bundle.js" in html
        init = await harness.client.get("/docs/swagger-init.js")
        assert init.status_code == 200
        assert init.headers["content-type"].startswith("text/javascript")
        assert "SwaggerUIBundle(" in init.text and "dataset.openapiUrl" in init.text
        bundle = await harness.client.get("/static/docs/swagger-ui-bundle.js")
        assert "SwaggerUIBundle" in bundle.text
        # The page's own static files are still served beside the docs assets.
        assert (await harness.client.get("/static/docs/swagger-ui.css")).status_code == 200
        assert (await harness.client.get("/")).status_code == 200
