"""What a tournament's results are read as: tables and PGN.

:func:`interim_table` gives the table of the games a run has finished so far (running,
interrupted or done) without playing anything; :func:`pgn_text` and :func:`export_pgn` give
2-player games as PGN for BayesElo and Ordo; :func:`_table_games` and :func:`_timing` turn the
finished games into the rows of ``results.json``'s table and into ``timing.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from taluva_ai.errors import RunConfigError
from taluva_ai.tournament.agents import time_budget
from taluva_ai.tournament.rundir import CONFIG_FILE, LOG_FILE, _read_log
from taluva_ai.tournament.schedules import _GameTask, schedule
from taluva_ai.tournament.settings import TOURNAMENT_FORMAT, read_config


def _table_games(specs: Sequence[str], tasks: Sequence[_GameTask],
                 done: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The finished games of ``tasks`` (in their order) as :func:`tournament_table` takes
    them."""
    games = []
    for t in tasks:
        e = done.get(t.game_id)
        if e is None:
            continue
        g = {"id": t.game_id, "group": [specs[i] for i in t.group], "seats": list(t.seats),
             "deal": t.deal, "places": list(e["places"]), "winners": list(e["winners"]),
             "end_reason": e["end_reason"]}
        if e.get("forfeit") is not None:
            g["forfeit"] = e["forfeit"]
        games.append(g)
    return games


def interim_table(out_dir: str | Path) -> dict[str, Any]:
    """The table of the games a tournament has finished so far, read from its run directory
    (running, interrupted or done) without playing anything: a look at a long run. Its
    ``games`` counts the finished games, ``scheduled_games`` all of them; each pair's figures
    come from the games it has played so far, and an agent without a finished game has
    ``elo`` and ``elo_ci95`` None. The records are not replayed (a resume does that). No SPRT:
    every finished game counts, also those an SPRT run finished after its decision (its
    ``results.json`` is the decided table).

    Raises:
        RunConfigError: ``out_dir`` holds no readable tournament ``config.json``, or its
            ``results.jsonl`` cannot be read.
    """
    from taluva_ai.ratings import tournament_table

    out = Path(out_dir)
    path = out / CONFIG_FILE
    cfg = read_config(path)
    if cfg.get("format") != TOURNAMENT_FORMAT:
        raise RunConfigError(f"{path}: format {cfg.get('format')!r}, not "
                             f"{TOURNAMENT_FORMAT!r}; this version cannot read it")
    try:
        specs = [str(a) for a in cfg["agents"]]
        k, games = cfg["players_per_game"], cfg["games_per_group"]
        if (len(set(specs)) != len(specs) or k not in (2, 3, 4) or len(specs) < k
                or not isinstance(games, int) or games < 1):
            raise ValueError("agents, players_per_game or games_per_group out of range")
        tasks = schedule(specs, games, k, cfg["seed"], cfg.get("gauntlet"))
    except (KeyError, TypeError, ValueError) as e:
        raise RunConfigError(f"{path}: not a tournament's settings ({e})") from None
    done = _read_log(out / LOG_FILE, tasks.ids)
    finished = [tasks[tasks.ids.order(g)] for g in sorted(done, key=tasks.ids.order)]
    try:
        table = tournament_table(specs, _table_games(specs, finished, done), k, seed=cfg["seed"])
    except ValueError as e:
        raise RunConfigError(f"{out / LOG_FILE}: {e}") from None
    for a in table["agents"].values():  # no rating from no game
        if a["games"] == 0:
            a["elo"] = a["elo_ci95"] = None
    return {"config": cfg, "scheduled_games": len(tasks), **table}


#: PGN ``Termination`` tag of a game's end (the standard's values).
_PGN_TERMINATION = {"time": "time forfeit", "illegal_action": "rules infraction",
                    "exception": "rules infraction"}


def _pgn_tag(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def pgn_result(places: Sequence[int]) -> str:
    """The PGN result of a 2-player game from its places (0 best): ``"1-0"`` when seat 0 (PGN's
    White) placed better, ``"0-1"`` when seat 1 (Black) did, ``"1/2-1/2"`` for a tie, ``"*"``
    for an undecided (truncated) game."""
    a, b = places
    if a < 0 or b < 0:
        return "*"
    return "1-0" if a < b else "0-1" if b < a else "1/2-1/2"


def pgn_text(game_name: str, entries: Sequence[dict[str, Any]]) -> str:
    """The results of 2-player tournament games as PGN, for BayesElo (``readpgn``) and Ordo
    (``ordo -p``): one game per entry (a ``results.jsonl`` line), in the given order, with the
    Seven Tag Roster (``White`` the first seat's agent, ``Black`` the second's, ``Result``,
    ``Round`` the deal + 1; ``Event``, ``Site`` and ``Date`` fixed, so identical runs give
    identical files), ``GameId`` and ``Termination`` (``normal``, ``time forfeit``, ``rules
    infraction`` for an exception or an illegal action, ``unterminated`` for a truncated
    game), and the result as the only movetext.

    Raises:
        ValueError: an entry that is not a 2-player game.
    """
    out = []
    for e in entries:
        if len(e["seats"]) != 2:
            raise ValueError(f"PGN holds 2-player games; game {e['id']} has "
                             f"{len(e['seats'])} players")
        result = pgn_result(e["places"])
        f = e.get("forfeit")
        term = (_PGN_TERMINATION.get(f["reason"], "rules infraction") if f is not None
                else "unterminated" if result == "*" else "normal")
        tags = [("Event", f"taluva-ai {game_name} tournament"), ("Site", "taluva-ai"),
                ("Date", "????.??.??"), ("Round", str(int(e["deal"]) + 1)),
                ("White", str(e["seats"][0])), ("Black", str(e["seats"][1])),
                ("Result", result), ("GameId", str(e["id"])), ("Termination", term)]
        out.append("".join(f'[{k} "{_pgn_tag(v)}"]\n' for k, v in tags) + f"\n{result}\n\n")
    return "".join(out)


def export_pgn(out_dir: str | Path) -> str:
    """The PGN (:func:`pgn_text`) of every game a 2-player tournament has finished so far, in
    game-id order, read from its run directory (running, interrupted or done; an SPRT run's
    games after the decision included, unlike its ``games.pgn``).

    Raises:
        RunConfigError: ``out_dir`` holds no readable tournament, or one of 3-4 player games.
    """
    out = Path(out_dir)
    cfg = read_config(out / CONFIG_FILE)
    try:
        specs = [str(a) for a in cfg["agents"]]
        k, games = cfg["players_per_game"], cfg["games_per_group"]
        tasks = schedule(specs, games, k, cfg["seed"], cfg.get("gauntlet"))
    except (KeyError, TypeError, ValueError) as e:
        raise RunConfigError(f"{out / CONFIG_FILE}: not a tournament's settings ({e})") from None
    if k != 2:
        raise RunConfigError(f"{out}: a tournament of {k}-player games; PGN holds 2-player "
                             "games")
    done = _read_log(out / LOG_FILE, {t.game_id for t in tasks})
    return pgn_text(str(cfg.get("game")), [done[t.game_id] for t in tasks if t.game_id in done])


def _timing(specs: Sequence[str], counted: Sequence[_GameTask],
            done: dict[str, dict[str, Any]], margin: float) -> dict[str, Any]:
    """``timing.json``: per agent, decisions, seconds spent, mean and longest move over the
    counted games whose time was measured, the budget (``time=``) and the forfeit limit.
    Wall-clock figures, kept out of ``results.json`` so that identical runs give identical
    tables."""
    out: dict[str, Any] = {}
    for s in specs:
        budget = time_budget(s)
        out[s] = {"games_timed": 0, "moves": 0, "time_s": 0.0, "mean_move_s": None,
                  "max_move_s": None, "budget_s": budget,
                  "limit_s": None if budget is None else budget + margin}
    for t in counted:
        e = done[t.game_id]
        if e.get("time_s") is None:
            continue
        for seat, s in enumerate(e["seats"]):
            a = out[s]
            a["games_timed"] += 1
            a["moves"] += e["moves"][seat]
            a["time_s"] += e["time_s"][seat]
            m = e["max_move_s"][seat]
            a["max_move_s"] = m if a["max_move_s"] is None else max(a["max_move_s"], m)
    for a in out.values():
        if a["moves"]:
            a["mean_move_s"] = round(a["time_s"] / a["moves"], 6)
        a["time_s"] = round(a["time_s"], 3)
    return {"agents": out, "margin_s": margin,
            "note": "wall-clock seconds in act(); differ between identical runs"}
