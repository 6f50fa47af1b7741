"""The interactive API docs (/docs: Swagger UI, /redoc: ReDoc), served offline.

FastAPI's own pages load Swagger UI and ReDoc from a CDN: on a server without Internet access
(or behind a strict proxy) /docs stays blank. Here the bundles come from the PyPI package
`fastapi-offline` (Swagger UI 5 and ReDoc 2 builds in its static/ folder; only its files are
used) and are served by Eko under /static/docs. The pages carry no inline script — Swagger UI
is started by /docs/swagger-init.js, which reads the schema URL from the page — so they work
under a Content-Security-Policy of `script-src 'self'`.
"""

from __future__ import annotations

import html
from importlib.util import find_spec
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/static/docs"
INIT_SCRIPT_URL = "/docs/swagger-init.js"
ASSETS_PACKAGE = "fastapi_offline"

# FastAPI's Swagger UI defaults (fastapi.openapi.docs.swagger_ui_default_parameters), plus
# keeping the API key across reloads: every /v1 route needs it.
SWAGGER_INIT_JS = """\
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
});
"""


def assets_dir() -> Path:
    """The folder holding swagger-ui-bundle.js, swagger-ui.css, redoc.standalone.js."""
    spec = find_spec(ASSETS_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the package {ASSETS_PACKAGE} is not installed (pip install -e .)")
    # Located without importing it: its __init__ builds a FastAPI app factory Eko does not use.
    return Path(spec.origin).parent / "static"


def _page(title: str, head: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n{head}</head>\n<body>\n{body}</body>\n</html>\n"
    )


def docs_router(*, title: str, openapi_url: str) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def url(request: Request, path: str) -> str:
        # Behind a proxy that mounts Eko under a prefix, links must carry it.
        return html.escape(f"{request.scope.get('root_path', '')}{path}", quote=True)

    @router.get("/docs")
    async def swagger_ui(request: Request) -> HTMLResponse:
        head = (
            f'<link rel="stylesheet" href="{url(request, ASSETS_URL + "/swagger-ui.css")}">\n'
            f'<link rel="icon" href="{url(request, ASSETS_URL + "/favicon.png")}">\n'
        )
        body = (
            f'<div id="swagger-ui" data-openapi-url="{url(request, openapi_url)}"></div>\n'
            f'<script src="{url(request, ASSETS_URL + "/swagger-ui-bundle.js")}"></script>\n'
            f'<script src="{url(request, INIT_SCRIPT_URL)}"></script>\n'
        )
        return _page(f"{title} - Swagger UI", head, body)

    @router.get(INIT_SCRIPT_URL)
    async def swagger_init() -> Response:
        return Response(SWAGGER_INIT_JS, media_type="text/javascript")

    @router.get("/redoc")
    async def redoc(request: Request) -> HTMLResponse:
        head = f'<link rel="icon" href="{url(request, ASSETS_URL + "/favicon.png")}">\n'
        body = (
            f'<redoc spec-url="{url(request, openapi_url)}"></redoc>\n'
            f'<script src="{url(request, ASSETS_URL + "/redoc.standalone.js")}"></script>\n'
        )
        return _page(f"{title} - ReDoc", head, body)

    return router


def install_docs(app: FastAPI) -> None:
    """/docs and /redoc with their assets. The app must be built with docs_url=None and
    redoc_url=None, and this called before any mount of /static (the first match wins)."""
    app.include_router(docs_router(title=app.title, openapi_url=app.openapi_url or "/openapi.json"))
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
