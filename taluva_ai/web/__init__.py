"""The browser board: ``taluva serve DIRS`` (docs/web.md).

:func:`taluva_ai.web.app.create_app` builds the Starlette app (``pip install -e '.[web]'``);
:func:`run_server` serves it with uvicorn. This module imports neither, so the CLI can check
its arguments without the extra.
"""

from __future__ import annotations

from typing import Any

#: The addresses that only this machine reaches.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def run_server(app: Any, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` until interrupted (Ctrl-C)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")
