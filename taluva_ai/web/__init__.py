"""The browser board: ``taluva serve DIRS`` (docs/web.md).

:func:`taluva_ai.web.app.create_app` builds the Starlette app (``pip install -e '.[web]'``);
:func:`run_server` serves it with uvicorn. This module imports neither, so the CLI can check
its arguments without the extra.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
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


#: Seconds a stopping server waits for the requests in flight before it cancels them (and
#: their searches, :mod:`taluva_ai.web.cancel`).
SHUTDOWN_GRACE = 2


def served_hosts(host: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The ``Host`` header values a server listening on ``host:port`` answers
    (:class:`taluva_ai.web.guard.HostRule` entries): this machine's names, ``host`` (any IP
    address when it is a wildcard such as ``0.0.0.0``) and the names ``extra``
    (``--allow-host``), each with ``port``."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    bare = host.strip("[]")
    if bare in ("0.0.0.0", "::", ""):
        names.append("*")
    else:
        names.append(f"[{bare}]" if ":" in bare else bare)
    for e in extra:
        e = e.strip().strip("[]")
        if e:
            names.append(f"[{e}]" if ":" in e else e)
    return [f"{n}:{port}" for n in dict.fromkeys(names)]


def run_server(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on the bound socket ``sock`` (:func:`listen`) until
    interrupted (Ctrl-C); a stop waits at most :data:`SHUTDOWN_GRACE` seconds for the requests
    in flight, then cancels them (an agent's search stops with its request)."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                  timeout_graceful_shutdown=SHUTDOWN_GRACE)).run(sockets=[sock])
