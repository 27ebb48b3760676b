"""Matches and tournaments between agents, for any game of :mod:`taluva_ai.protocol`.

:func:`play_game` plays one game (and writes its record); :func:`run_tournament` plays a
round robin with shared deals and seat rotations, in parallel, resumably, and rates the agents
(:mod:`taluva_ai.ratings`).

Seeds (all derived with :class:`numpy.random.SeedSequence`, so every game is reproducible on
its own):

- a game's seed shuffles the deck (``game.new_initial_state(seed)``; chance nodes are resolved
  by ``state.draw()``, so one seed gives one tile sequence whatever the players do, as long as
  the game lasts) and, through ``SeedSequence(seed).spawn(num_players)``, seeds the agent of
  each seat (``agent.reset(seed)``);
- in a tournament, deal ``d`` has seed ``SeedSequence([seed, d]).generate_state(1)[0]``; every
  group of agents plays the same deals, each deal once per seat rotation.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import math
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.errors import RecordError, RunConfigError
from taluva_ai.protocol import CHANCE, Game, make_game
from taluva_ai.records import (
    MoveEvent,
    RecordWriter,
    StateCallback,
    outcome_of,
    read_header,
    read_result,
)

#: Value of ``config.json``'s ``format`` field in a tournament directory.
TOURNAMENT_FORMAT = "taluva-ai-tournament/1"


@dataclass(frozen=True)
class GameResult:
    """The result of one game.

    Attributes:
        returns: final value per seat (``state.returns()``; zeros for a truncated game).
        winners: seats that share first place (empty when truncated).
        end_reason: e.g. ``"early_victory"``, ``"last_standing"``, ``"tiles_out"``,
            ``"truncated"`` (:class:`taluva_ai.records.Outcome`).
        places: final place per seat (0 best).
        plies: actions applied, chance outcomes included.
        players: agent name (spec) per seat.
        seed: the game seed.
    """

    returns: tuple[float, ...]
    winners: tuple[int, ...]
    end_reason: str
    places: tuple[int, ...]
    plies: int
    players: tuple[str, ...]
    seed: int | None


def agent_seeds(seed: int | None, num_players: int) -> list[int] | None:
    """Per-seat agent seeds derived from a game seed (``SeedSequence(seed).spawn(n)``, each
    child's first 32-bit word); None when ``seed`` is None (agents then draw fresh entropy)."""
    if seed is None:
        return None
    children = np.random.SeedSequence(seed).spawn(num_players)
    return [int(c.generate_state(1)[0]) for c in children]


def play_game(
    game: Game,
    agents: Sequence[Any],
    seed: int | None,
    record_path: str | Path | None = None,
    on_state: StateCallback | None = None,
    meta: dict[str, Any] | None = None,
) -> GameResult:
    """Play one game between ``agents`` (one per seat, seat order).

    Chance nodes are resolved by ``state.draw()`` (the deck shuffled from ``seed``); each agent
    is reset with its seat's seed from :func:`agent_seeds` before the game, so the same seed
    and agents give the same game.

    Args:
        game: the game (its ``num_players`` must equal ``len(agents)``).
        agents: :class:`taluva_ai.agents.Agent` objects (``act``, ``reset``, ``stats``,
            ``name``).
        seed: game seed (int), or None for a fresh random game.
        record_path: write the game record there (:mod:`taluva_ai.records`).
        on_state: ``on_state(state, event)``, called with the initial state (``event`` None)
            and after every action (:class:`~taluva_ai.records.MoveEvent`, with the agent's
            ``stats()``). ``state`` is always the same object, updated in place; the callback
            must not modify it.
        meta: stored in the record header's ``meta``.

    Returns:
        The :class:`GameResult`.

    Raises:
        ValueError: the number of agents does not match the game.
        taluva_ai.errors.IllegalActionError: an agent chose an illegal action.
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{len(agents)} agents for a game of {n} players")
    names = tuple(str(getattr(a, "name", type(a).__name__)) for a in agents)
    seeds = agent_seeds(seed, n)
    for i, agent in enumerate(agents):
        agent.reset(None if seeds is None else seeds[i])
    state = game.new_initial_state(seed=seed)
    writer = (
        RecordWriter(record_path, game, seed, names, agent_seeds=seeds, meta=meta)
        if record_path is not None else None
    )
    try:
        if on_state is not None:
            on_state(state, None)
        plies = 0
        while not state.is_terminal():
            p = state.current_player
            stats: dict[str, Any] = {}
            if p == CHANCE:
                a = state.clone().draw()  # the seeded deck decides; applied below like any action
            else:
                a = int(agents[p].act(state))
                stats = agents[p].stats()
            if writer is not None:
                text = writer.write_action(state, a)
            elif on_state is not None:
                text = state.action_to_string(a)
            else:
                text = ""
            state.apply(a)
            if on_state is not None:
                on_state(state, MoveEvent(plies, p, a, text, stats))
            plies += 1
        out = writer.write_result(state) if writer is not None else outcome_of(state, plies)
    finally:
        if writer is not None:
            writer.close()
    return GameResult(out.returns, out.winners, out.end_reason, out.places, out.plies, names,
                      seed)


def make_agent(spec: str, seed: int | None = None) -> Any:
    """Make an agent from its spec (``"random"``, ``"greedy:epsilon=0.1"``, ``"module:Class"``)
    with the agent registry of ``taluva_ai.agents``, looked up by name at run time: the core
    reaches agents only through names, never by a static import (DESIGN.md, Layout).

    Raises:
        ValueError: an unknown agent or a bad parameter (the message lists the known names).
        ImportError, AttributeError: a ``module:Class`` spec that does not resolve.
    """
    registry = importlib.import_module("taluva_ai.agents")
    return registry.make_agent(spec, seed=seed)


# -- tournaments ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _GameTask:
    """One scheduled tournament game."""

    game_id: str
    group: tuple[int, ...]  # agent indices of the group, ascending
    deal: int
    rotation: int
    seats: tuple[str, ...]  # agent spec per seat
    seed: int


def deal_seed(seed: int, deal: int) -> int:
    """Seed of deal ``deal`` of a tournament of seed ``seed`` (shared by all groups)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])


def schedule(
    agent_specs: Sequence[str], games: int, players_per_game: int, seed: int
) -> list[_GameTask]:
    """The tournament's games, in game-id order.

    Every group of ``players_per_game`` agents (all pairs, triples or quadruples, in
    :func:`itertools.combinations` order) plays ``ceil(games / k)`` deals, ``k =
    players_per_game``, each deal once per cyclic seat rotation (rotation ``r`` seats the
    group's agents ``r, r+1, ...``), so ``games`` is rounded up to a multiple of ``k``.
    Game ids are ``"<group:03d>-<deal:04d>-<rotation>"``.
    """
    k = players_per_game
    deals = math.ceil(games / k)
    tasks = []
    for gi, group in enumerate(itertools.combinations(range(len(agent_specs)), k)):
        for d in range(deals):
            s = deal_seed(seed, d)
            for r in range(k):
                order = group[r:] + group[:r]
                tasks.append(_GameTask(f"{gi:03d}-{d:04d}-{r}", group, d, r,
                                       tuple(agent_specs[i] for i in order), s))
    return tasks


_WORKER_CACHE: dict[str, Any] = {}


def _play_task(game_name: str, rules: dict[str, Any], task: _GameTask, path: str) -> str:
    """Worker: play one scheduled game and write its record; returns the game id."""
    key = json.dumps([game_name, rules], sort_keys=True)
    game = _WORKER_CACHE.get(key)
    if game is None:
        game = make_game(game_name, **rules)
        _WORKER_CACHE.clear()
        _WORKER_CACHE[key] = game
    agents = [make_agent(spec) for spec in task.seats]
    meta = {"id": task.game_id, "deal": task.deal, "rotation": task.rotation}
    play_game(game, agents, task.seed, record_path=path, meta=meta)
    return task.game_id


def _complete(path: Path, task: _GameTask, game_name: str, rules: dict[str, Any]) -> bool:
    """True when ``path`` holds a finished record of ``task`` (header matches, result line)."""
    if not path.is_file():
        return False
    try:
        h = read_header(path)
    except (RecordError, OSError):
        return False
    if (h.game, h.rules, h.seed, h.players) != (game_name, rules, task.seed, task.seats):
        return False
    return read_result(path) is not None


def tournament_config(
    agent_specs: Sequence[str],
    games: int,
    players_per_game: int,
    seed: int,
    game_name: str,
    rules: dict[str, Any],
) -> dict[str, Any]:
    """The settings that define a tournament's games (``out_dir/config.json``)."""
    return {
        "format": TOURNAMENT_FORMAT,
        "game": game_name,
        "rules": rules,
        "agents": list(agent_specs),
        "games_per_group": games,
        "players_per_game": players_per_game,
        "seed": seed,
    }


def run_tournament(
    agent_specs: Sequence[str],
    games: int,
    out_dir: str | Path,
    players_per_game: int = 2,
    concurrency: int = 1,
    seed: int = 0,
    rules: dict[str, Any] | None = None,
    game_name: str = "taluva",
    bootstrap: int = 1000,
    progress: bool = True,
) -> dict[str, Any]:
    """Round-robin tournament: every group of ``players_per_game`` agents plays ``games``
    games (rounded up to a multiple of the seat rotations, see :func:`schedule`).

    Writes, under ``out_dir``: ``config.json`` (the settings), ``games/<id>.jsonl`` (every
    game record) and ``results.json`` (the table of :func:`taluva_ai.ratings.tournament_table`).
    Resumable: run again with the same arguments, it keeps the games whose records are complete
    and plays the rest. The table is computed from the records in game-id order, so it depends
    neither on ``concurrency`` nor on the order in which games finish: the same seed and
    settings give identical records and table.

    Args:
        agent_specs: distinct agent specs (``"random"``, ``"greedy:epsilon=0.1"``,
            ``"module:Class"``); at least ``players_per_game``. The first is the Elo anchor.
        games: games per group (>= 1).
        out_dir: the run directory.
        players_per_game: 2, 3 or 4 (sets the game's ``num_players``).
        concurrency: worker processes (1 plays in this process).
        seed: tournament seed (deals and agent seeds derive from it).
        rules: the game's options other than ``num_players`` (e.g. ``{"ranked": True}``).
        game_name: registered game name.
        bootstrap: bootstrap resamples for the Elo intervals.
        progress: show a tqdm progress bar (on stderr).

    Returns:
        The results table (also written to ``out_dir/results.json``).

    Raises:
        ValueError: bad arguments (unknown agent, duplicate specs, too few agents, bad rules).
        RunConfigError: ``out_dir`` holds a tournament made with other settings.
    """
    from tqdm import tqdm

    from taluva_ai.ratings import tournament_table

    specs = [str(s) for s in agent_specs]
    if len(set(specs)) != len(specs):
        raise ValueError(f"agent specs must be distinct, got {specs}")
    if players_per_game not in (2, 3, 4):
        raise ValueError(f"players_per_game must be 2, 3 or 4, got {players_per_game}")
    if len(specs) < players_per_game:
        raise ValueError(f"{len(specs)} agents for games of {players_per_game} players")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    for s in specs:
        make_agent(s)  # raises ValueError for an unknown agent or a bad parameter
    opts = dict(rules or {})
    if opts.get("num_players", players_per_game) != players_per_game:
        raise ValueError("rules' num_players differs from players_per_game")
    opts["num_players"] = players_per_game
    game = make_game(game_name, **opts)
    full_rules = game.options()

    out = Path(out_dir)
    config = tournament_config(specs, games, players_per_game, seed, game_name, full_rules)
    cfg_path = out / "config.json"
    if cfg_path.exists():
        try:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise RunConfigError(f"{cfg_path}: unreadable ({e}); use another --out") from None
        if old != config:
            keys = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
            raise RunConfigError(
                f"{out} holds a tournament made with other settings (they differ in: "
                f"{', '.join(keys)}); use another output directory or the same arguments"
            )
    out.mkdir(parents=True, exist_ok=True)
    (out / "games").mkdir(exist_ok=True)
    if not cfg_path.exists():
        cfg_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    tasks = schedule(specs, games, players_per_game, seed)
    paths = {t.game_id: out / "games" / f"{t.game_id}.jsonl" for t in tasks}
    todo = [t for t in tasks if not _complete(paths[t.game_id], t, game_name, full_rules)]
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), disable=not progress,
               desc="games", unit="game", dynamic_ncols=True)
    try:
        if concurrency == 1 or len(todo) <= 1:
            for t in todo:
                _play_task(game_name, full_rules, t, str(paths[t.game_id]))
                bar.update(1)
        else:
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=concurrency, mp_context=ctx) as ex:
                futures = [
                    ex.submit(_play_task, game_name, full_rules, t, str(paths[t.game_id]))
                    for t in todo
                ]
                for fut in as_completed(futures):
                    fut.result()
                    bar.update(1)
    finally:
        bar.close()

    games_done = []
    for t in tasks:
        res = read_result(paths[t.game_id])
        if res is None:  # pragma: no cover - a record just written is complete
            raise RecordError(0, "result", f"{paths[t.game_id]}: no result line")
        games_done.append(
            {"id": t.game_id, "group": [specs[i] for i in t.group], "seats": list(t.seats),
             "places": list(res.places), "winners": list(res.winners),
             "end_reason": res.end_reason}
        )
    table = tournament_table(specs, games_done, players_per_game, bootstrap=bootstrap,
                             seed=seed)
    table = {"config": config, "records_sha256": _records_digest(paths, tasks), **table}
    (out / "results.json").write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    return table


def _records_digest(paths: dict[str, Path], tasks: Sequence[_GameTask]) -> str:
    """SHA-256 over every record's bytes in game-id order (identical runs, identical digest)."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(t.game_id.encode())
        h.update(paths[t.game_id].read_bytes())
    return h.hexdigest()

