"""HTTP API: FastAPI app, routers, auth, problem+json errors; serves the web page."""
