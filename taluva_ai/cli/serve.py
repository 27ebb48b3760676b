"""``taluva serve``: the browser board (:mod:`taluva_ai.web`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taluva_ai.cli.core import _ArgError, _RunError


def _cmd_serve(args: argparse.Namespace) -> int:
    import re

    from taluva_ai import web

    for d in args.dirs:
        if not Path(d).is_dir():
            raise _ArgError(f"DIRS: {d!r} is not a directory")
    try:
        from taluva_ai.web.app import create_app
    except ImportError as e:
        raise _ArgError(f"taluva serve needs the web extra (pip install -e '.[web]'): {e}") \
            from None
    for name in args.allow_host:
        if not re.fullmatch(r"[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?", name):
            raise _ArgError(f"--allow-host: {name!r} is not a host name or an IP address "
                            "(give it without a port: the server's port is added)")
    for module in args.allow_agent_module:
        if not all(part.isidentifier() for part in module.split(".")):
            raise _ArgError(f"--allow-agent-module: {module!r} is not a module name "
                            "(package.module)")
    host = args.host
    app = create_app(args.dirs, hosts=web.served_hosts(host, args.port, args.allow_host),
                     agent_modules=args.allow_agent_module)
    try:
        sock = web.listen(host, args.port)
    except OSError as e:
        raise _RunError(f"cannot listen on {host}:{args.port}: {e.strerror or e}") from None
    shown = f"[{host}]" if ":" in host else host
    print(f"serving the game records under: {', '.join(str(Path(d)) for d in args.dirs)}")
    print(f"open http://{shown}:{args.port}/  (Ctrl-C stops)", flush=True)
    if host not in web.LOCAL_HOSTS:
        print(f"WARNING: listening on {host}, not 127.0.0.1: other machines that reach this "
              f"one on port {args.port} can read every game record under these directories",
              file=sys.stderr, flush=True)
    if args.allow_agent_module:
        print(f"WARNING: the page may run Python classes of {', '.join(args.allow_agent_module)}"
              " (--allow-agent-module) with any parameters", file=sys.stderr, flush=True)
    try:
        web.run_server(app, sock)
    finally:
        sock.close()
    return 0
