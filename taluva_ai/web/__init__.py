"""The browser board: ``taluva serve DIRS`` (docs/web.md).

:func:`taluva_ai.web.app.create_app` builds the Starlette app (``pip install -e '.[web]'``);
:func:`run_server` serves it with uvicorn. This module imports neither, so the CLI can check
its arguments without the extra.
"""

from __future__ import annotations

import socket
from typing import Any

#: The addresses that only this machine reaches.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (IPv6 when ``host`` holds a colon), so that a port
    in use is refused before the address is announced.

    Raises:
        OSError: the address cannot be bound (in use, not this machine's, no permission).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def run_server(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on the bound socket ``sock`` (:func:`listen`) until
    interrupted (Ctrl-C)."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
