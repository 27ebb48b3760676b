"""``taluva serve``: the browser board (:mod:`taluva_ai.web`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taluva_ai.cli.core import (
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _port,
    _refused,
)


def _cmd_serve(args: argparse.Namespace) -> int:
    import re

    from taluva_ai import web

    for d in args.dirs:
        if not Path(d).is_dir():
            raise _ArgError(f"DIRS: {d!r} is not a directory")
    with _refused("taluva serve needs the web extra (pip install -e '.[web]'): ", ImportError):
        from taluva_ai.web.app import create_app
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
    with _refused(f"cannot listen on {host}:{args.port}: ", OSError, run=True):
        sock = web.listen(host, args.port)
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


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva serve``, its options and its handler to the subcommands ``sub``."""
    serve = _add_command(
        sub, "serve",
        help="a browser board: replay and analyse game records, play against agents, "
        "browse tournament runs",
        description="Start a local web app (Starlette and uvicorn: pip install -e '.[web]') "
        "with three views. Replay: the game records (*.jsonl; Taluva and Thurn und Taxis) "
        "under DIRS, stepped with the buttons, the arrow keys or the slider, the move list in "
        "notation, an agent's search of any position (mcts:..., az:builtin: candidate moves, "
        "visits, values, a heat map) and a value graph over the game. Play: a game against "
        "any agent specs, 2-4 seats, people and agents mixed, any rule options. Runs: a "
        "tournament run's table, plots and games. The board is drawn as SVG (as 'taluva "
        "replay --svg'). Only files under DIRS are read. Requests that change anything must "
        "come from the page itself (Content-Type application/json, the server's own Origin "
        "and Host: no other web site can drive it); agents are limited to the registered ones "
        "with bounded searches unless --allow-agent-module says otherwise; a search stops when "
        "its client leaves or the server stops. Prints the address; stop it with Ctrl-C "
        "(docs/web.md, Security).",
        examples=[
            "taluva serve runs/t1",
            "taluva serve runs --port 8080",
            "taluva serve runs --allow-agent-module mypkg.bots",
        ],
        handler=_cmd_serve)
    serve.add_argument("dirs", metavar="DIRS", nargs="*", default=["."],
                       help="directories whose game records (*.jsonl, in subdirectories too) "
                       "the page may open (default: the current directory)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on; anything but 127.0.0.1, localhost or "
                       "::1 lets other machines read the records (a warning is printed)")
    serve.add_argument("--port", type=_port, default=8000,
                       help="the TCP port, 1..65535")
    serve.add_argument("--allow-host", metavar="NAME", action="append", default=[],
                       help="a host name (or address) the page may be opened by besides "
                       "127.0.0.1, localhost, [::1] and --host (repeatable; e.g. the "
                       "machine's name on the network with --host 0.0.0.0). Any other Host "
                       "header is refused (403), which stops DNS rebinding")
    serve.add_argument("--allow-agent-module", metavar="MODULE", action="append", default=[],
                       help="let the page's seats and analyses name classes of this Python "
                       "module (and its submodules) as MODULE:Class[:KEY=VALUE,...] "
                       "(repeatable). Without it only the registered agents play (random, "
                       "greedy, mcts, ismcts, az with builtin or a .pt checkpoint under DIRS "
                       "as path=<dir index>/<file>, openspiel), with bounded search "
                       "parameters; module:Class specs are refused (403)")
