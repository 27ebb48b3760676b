"""The request checks of the browser board that no route has to remember (docs/web.md,
Security): an ASGI middleware in front of every route.

- **Host.** Every request must name, in its ``Host`` header, an address this server answers
  (:class:`HostRule`: by default ``127.0.0.1``, ``localhost`` and ``[::1]``; ``taluva serve``
  adds the port it listens on, its ``--host`` and ``--allow-host`` names). A page of another
  site that has its own name resolve to 127.0.0.1 (DNS rebinding) sends its own name, and is
  refused (403).
- **State-changing requests** (every method but ``GET``, ``HEAD`` and ``OPTIONS``) must carry
  ``Content-Type: application/json`` (415 otherwise): a browser sends that type from another
  site only after a CORS preflight, which this server never grants, so no other site's form
  or ``fetch`` can reach a route that changes something. An ``Origin`` header, when present,
  must be this server's own (``http://<Host>``), and ``Sec-Fetch-Site``, when present, must not
  say ``cross-site`` or ``same-site`` (403). A declared ``Content-Length`` over the body limit
  is refused before any of the body is read (413).
- Every answer carries ``X-Content-Type-Options: nosniff`` and ``X-Frame-Options: DENY``.

A refusal is a one-line JSON error like every other answer of the board.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any

#: The names of this machine that a browser may use for a server listening on it.
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: The methods that change nothing (every other is checked as state-changing).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Headers added to every answer.
ALWAYS_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"))


def split_host(text: str) -> tuple[str, str | None]:
    """``"name:port"`` -> ``("name", "port")``; ``"[::1]:8000"`` -> ``("[::1]", "8000")``; a
    name without a port -> ``(name, None)``; lower case. A bare IPv6 address gets its
    brackets."""
    text = text.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return text, None
        name, rest = text[:end + 1], text[end + 1:]
        return name, (rest[1:] if rest.startswith(":") else None)
    if text.count(":") > 1:  # a bare IPv6 address
        return f"[{text}]", None
    name, colon, port = text.partition(":")
    return name, (port if colon else None)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


class HostRule:
    """The ``Host`` header values a server answers.

    Args:
        hosts: entries ``NAME:PORT`` (that name on that port), ``NAME`` (that name on any
            port), or ``*:PORT`` (any IP address literal on that port: a server listening on
            every interface, ``--host 0.0.0.0``, reached by its address; DNS rebinding always
            sends a name, never an address). None: :data:`LOCAL_NAMES` on any port.
    """

    def __init__(self, hosts: Iterable[str] | None = None) -> None:
        self.exact: set[tuple[str, str]] = set()
        self.any_port: set[str] = set()
        self.ip_ports: set[str] = set()
        for entry in (LOCAL_NAMES if hosts is None else hosts):
            name, port = split_host(entry)
            if name == "*" and port:
                self.ip_ports.add(port)
            elif port is None:
                self.any_port.add(name)
            else:
                self.exact.add((name, port))

    def allows(self, host: str) -> bool:
        """Whether the ``Host`` header ``host`` names this server."""
        name, port = split_host(host)
        if not name or (port is not None and not (port.isascii() and port.isdigit())):
            return False
        if name in self.any_port:
            return True
        if port is not None and (name, port) in self.exact:
            return True
        return port is not None and port in self.ip_ports and _is_ip(name)

    def describe(self) -> str:
        shown = sorted(f"{n}:{p}" for n, p in self.exact) + sorted(self.any_port) \
            + [f"any IP address:{p}" for p in sorted(self.ip_ports)]
        return ", ".join(shown)


class Guard:
    """The ASGI middleware of the module docstring, in front of ``app``.

    Args:
        hosts: the :class:`HostRule`.
        max_body: the largest ``Content-Length`` accepted (bytes).
    """

    def __init__(self, app: Any, hosts: HostRule, max_body: int) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body = max_body

    def refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        """``(status, message)`` of a request refused before it reaches a route, or None."""
        headers: dict[str, str] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
        host = headers.get("host", "")
        if not self.hosts.allows(host):
            return 403, (f"refused Host {host[:80]!r}: this server answers only "
                         f"{self.hosts.describe()} (a page of another site cannot reach it)")
        if scope.get("method", "GET").upper() in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        own = f"{scope.get('scheme', 'http')}://{host}".lower()
        if origin is not None and origin.strip().lower() != own:
            return 403, (f"refused a request from origin {origin[:80]!r}: only this server's "
                         f"own page ({own}) may change anything here")
        site = headers.get("sec-fetch-site", "").strip().lower()
        if site in ("cross-site", "same-site"):
            return 403, (f"refused a {site} request: only this server's own page may change "
                         "anything here")
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return 415, (f"a {scope.get('method')} request must be sent as application/json, "
                         f"got {kind[:80] or 'no Content-Type'!r}")
        length = headers.get("content-length")
        if length is not None:
            if not (length.strip().isascii() and length.strip().isdigit()):
                return 400, f"bad Content-Length {length[:40]!r}"
            if int(length) > self.max_body:
                return 413, f"request body over {self.max_body} bytes"
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                have = {k.lower() for k, _ in raw}
                raw += [(k, v) for k, v in ALWAYS_HEADERS if k not in have]
                message = {**message, "headers": raw}
            await send(message)

        refused = self.refusal(scope)
        if refused is None:
            await self.app(scope, receive, send_with_headers)
            return
        status, message = refused
        body = json.dumps({"error": message}).encode("utf-8")
        await send_with_headers({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"connection", b"close")]})
        await send_with_headers({"type": "http.response.body", "body": body})
