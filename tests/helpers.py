"""Helpers shared by the engine tests: hand-built positions and small queries on a state.

Scenario tests build positions directly in the state arrays (:mod:`taluva_ai.games.taluva.state`)
with :func:`make_position`, then drive them through the public API only (``legal_actions``,
``apply``, ``returns`` ...). The rules engine reads nothing but the top of each stack (level,
terrain, tile index, building, owner), so a hand-built island need not be one that real play
could reach; each scenario says what it contains.

Hexes are axial ``(q, r)``: ``q`` east, ``r`` south. Neighbours: E (1,0), NE (1,-1), NW (0,-1),
W (-1,0), SW (-1,1), SE (0,1). A tile with its volcano on ``(q, r)`` in orientation ``o`` has
its ``a`` hex in direction ``(o + 4) % 6`` and its ``b`` hex in direction ``(o + 5) % 6``
(``o`` = 0..5 is written ``N NW SW S SE NE``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from taluva_ai.games.taluva import TaluvaGame, TaluvaState
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.game import complete_deck
from taluva_ai.games.taluva.hexgrid import DIRECTIONS, hex_distance
from taluva_ai.games.taluva.tiles import (
    LETTER_TERRAIN,
    TERRAIN_LETTER,
    Building,
    Terrain,
    full_tile_set,
    parse_tile,
    tile_terrains,
)

#: One hex of a hand-built position: ``(q, r, level, terrain, tile_index)`` or
#: ``(q, r, level, terrain, tile_index, building, owner)``.
HexSpec = tuple[Any, ...]

_BUILDING_CODES: dict[Any, Building] = {
    None: Building.NONE, "": Building.NONE, ".": Building.NONE, 0: Building.NONE,
    "h": Building.HUT, "hut": Building.HUT, 1: Building.HUT,
    "T": Building.TEMPLE, "temple": Building.TEMPLE, 2: Building.TEMPLE,
    "W": Building.TOWER, "tower": Building.TOWER, 3: Building.TOWER,
}
_STEPS = {"chance": S.Step.CHANCE, "tile": S.Step.TILE, "build": S.Step.BUILD}


def _terrain(t: Any) -> Terrain:
    if isinstance(t, str):
        return LETTER_TERRAIN[t]
    return Terrain(int(t))


def _building(b: Any) -> Building:
    if isinstance(b, Building):
        return b
    return _BUILDING_CODES[b]


def _tile_id(t: int | str) -> int:
    return parse_tile(t) if isinstance(t, str) else int(t)


def tile_hexes(
    q: int, r: int, orientation: int | str, tile: str, level: int, index: int
) -> list[HexSpec]:
    """The three hex specs of tile ``tile`` (e.g. ``"JC"``) with its volcano on ``(q, r)``.

    Args:
        orientation: ``0..5`` or one of ``N NW SW S SE NE``.
        level: the level of the three hexes.
        index: the tile index (order of placement) written in all three hexes.
    """
    names = ("N", "NW", "SW", "S", "SE", "NE")
    o = names.index(orientation) if isinstance(orientation, str) else int(orientation)
    a_t, b_t = tile_terrains(parse_tile(tile))
    (aq, ar), (bq, br) = DIRECTIONS[(o + 4) % 6], DIRECTIONS[(o + 5) % 6]
    return [
        (q, r, level, Terrain.VOLCANO, index),
        (q + aq, r + ar, level, a_t, index),
        (q + bq, r + br, level, b_t, index),
    ]


def put(hexes: Iterable[HexSpec], buildings: Mapping[tuple[int, int], tuple[str, int]]
        ) -> list[HexSpec]:
    """``hexes`` with buildings added: ``{(q, r): (building letter, owner)}``.

    Raises:
        ValueError: a hex of ``buildings`` is not among ``hexes``.
    """
    out = []
    left = dict(buildings)
    for h in hexes:
        q, r, level, terr, index = h[:5]
        if (q, r) in left:
            b, owner = left.pop((q, r))
            out.append((q, r, level, terr, index, b, owner))
        else:
            out.append(tuple(h))
    if left:
        raise ValueError(f"no such hexes: {sorted(left)}")
    return out


def make_position(
    game: TaluvaGame,
    hexes: Iterable[HexSpec],
    *,
    player: int = 0,
    step: str = "build",
    tile: str | int | None = None,
    supplies: Mapping[int, tuple[int, int, int]] | None = None,
    destroyed: Mapping[int, int] | None = None,
    placed: int | None = None,
    drawn: int | None = None,
    upcoming: Sequence[str | int] = (),
    eliminated: Sequence[int] = (),
    finished: Sequence[int] = (),
    hands: Mapping[int, str | int] | None = None,
) -> TaluvaState:
    """A hand-built position of ``game``, written straight into the state arrays.

    Args:
        game: the game (its rules decide e.g. the deck size and ranked places).
        hexes: every non-empty hex, as ``(q, r, level, terrain, tile_index[, building, owner])``.
            ``terrain`` is a :class:`Terrain` or a letter (``"V"``, ``"J"``, ``"C"``, ``"S"``,
            ``"R"``, ``"L"``); ``building`` is ``None``/``"h"``/``"T"``/``"W"`` (or a
            :class:`Building`). Use distinct tile indices for hexes of different tiles: the
            eruption rule "not exactly on one tile" compares them.
        player: the seat to move (or, at a chance node, the seat the tile is drawn for).
        step: ``"chance"``, ``"tile"`` or ``"build"``.
        tile: the tile in hand at the tile step (e.g. ``"JC"``); required there.
        supplies: ``{seat: (huts, temples, towers)}`` left in the supply. Seats not given get
            the starting pieces less what stands on the board (a hut hex holds ``level`` huts).
        destroyed: ``{seat: huts destroyed by eruptions}`` (default 0).
        placed: tiles placed so far (``meta[M_PLACED]``); default: highest tile index + 1, so
            the next tile gets a fresh index.
        drawn: tiles drawn from the deck (``meta[M_DRAWN]``); default ``placed``, plus one at the
            tile step (the tile in hand). ``drawn == game.rules.deck_size`` means that no tile
            is left to draw: the game ends after this turn (tiles run out).
        upcoming: the next tiles to be drawn, in order (names or type ids).
        eliminated: seats already eliminated, in order of elimination (their ranked places are
            set as the engine sets them: the worst free places).
        finished: seats that already left with an early victory in ranked play, in order.
        hands: ``{seat: tile}`` held under ``tile_preview``.

    Returns:
        A :class:`TaluvaState` whose meta fields (step, player, tile, counters, the island's
        bounding box ``M_QMIN..M_RMAX``, ``M_PLACED``, ranking cursors) are consistent with
        the arguments.

    Raises:
        ValueError: an inconsistent spec (a building on a volcano or on level 0, a hex off the
            board or given twice, a missing tile at the tile step, a deck that does not fit).
    """
    n = game.num_players
    board = game.board
    deck_size = game.rules.deck_size
    specs = [tuple(h) for h in hexes]
    cells, players, _, meta = S.new_arrays(
        n, full_tile_set(), game.num_cells, game.rules.tile_preview
    )
    on_board = np.zeros((n, 3), dtype=np.int64)
    seen: set[tuple[int, int]] = set()
    max_index = -1
    qs: list[int] = []
    rs: list[int] = []
    for spec in specs:
        if len(spec) == 5:
            q, r, level, terr, index = spec
            building, owner = Building.NONE, -1
        elif len(spec) == 7:
            q, r, level, terr, index, b, owner = spec
            building = _building(b)
        else:
            raise ValueError(f"hex spec {spec!r}: expected 5 or 7 fields")
        if (q, r) in seen:
            raise ValueError(f"hex ({q},{r}) given twice")
        seen.add((q, r))
        if hex_distance(q, r) > board.radius:
            raise ValueError(f"hex ({q},{r}) lies off the board")
        t = _terrain(terr)
        if level < 1 or t is Terrain.NONE:
            raise ValueError(f"hex ({q},{r}): a table hex has level >= 1 and a terrain")
        if building is not Building.NONE:
            if t is Terrain.VOLCANO:
                raise ValueError(f"hex ({q},{r}): no building on a volcano")
            if not 0 <= owner < n:
                raise ValueError(f"hex ({q},{r}): owner {owner} is not a seat")
        c = board.cell(q, r)
        cells[c] = (level, int(t), index, int(building), owner if building else -1)
        if building is Building.HUT:
            on_board[owner, 0] += level
        elif building is Building.TEMPLE:
            on_board[owner, 1] += 1
        elif building is Building.TOWER:
            on_board[owner, 2] += 1
        max_index = max(max_index, int(index))
        qs.append(q)
        rs.append(r)
    start = np.array([S.START_HUTS, S.START_TEMPLES, S.START_TOWERS])
    for p in range(n):
        sup = supplies[p] if supplies and p in supplies else tuple(start - on_board[p])
        if min(sup) < 0:
            raise ValueError(f"seat {p}: negative supply {sup}")
        players[p, [S.P_HUTS, S.P_TEMPLES, S.P_TOWERS]] = sup
        players[p, S.P_DESTROYED] = (destroyed or {}).get(p, 0)
    # statuses, elimination order and (ranked) places as the engine sets them
    ranked = game.rules.ranked
    for i, p in enumerate(eliminated):
        players[p, S.P_STATUS] = S.Status.ELIMINATED
        players[p, S.P_ELIM_ORDER] = i
        if ranked:
            players[p, S.P_PLACE] = n - 1 - i
    for i, p in enumerate(finished):
        players[p, S.P_STATUS] = S.Status.FINISHED
        players[p, S.P_PLACE] = i
    meta[S.M_NELIM] = len(eliminated)
    meta[S.M_NEXT_WORST] = n - 1 - (len(eliminated) if ranked else 0)
    meta[S.M_NEXT_BEST] = len(finished)
    # counters
    if step not in _STEPS:
        raise ValueError(f"step must be one of {', '.join(_STEPS)}, got {step!r}")
    placed = max_index + 1 if placed is None else placed
    in_hand = step == "tile" and not game.rules.tile_preview
    if drawn is None:
        drawn = placed + (1 if in_hand else 0)
    if not 0 <= drawn <= deck_size:
        raise ValueError(f"drawn={drawn} outside 0..{deck_size}")
    meta[S.M_STEP] = _STEPS[step]
    meta[S.M_PLAYER] = player
    meta[S.M_DRAW_FOR] = player
    meta[S.M_PLACED] = placed
    meta[S.M_DRAWN] = drawn
    meta[S.M_PLY] = 3 * placed
    meta[S.M_SETUP] = 0
    if step == "tile":
        if tile is None:
            raise ValueError("the tile step needs the tile in hand")
        meta[S.M_TILE] = _tile_id(tile)
    else:
        meta[S.M_TILE] = -1
    if qs:
        meta[S.M_QMIN], meta[S.M_QMAX] = min(qs), max(qs)
        meta[S.M_RMIN], meta[S.M_RMAX] = min(rs), max(rs)
    for p, h in (hands or {}).items():
        players[p, S.P_HAND] = _tile_id(h)
    # deck: drawn tiles first (the one in hand last among them), then the upcoming ones
    reserved = [_tile_id(t) for t in upcoming]
    hand = [_tile_id(tile)] if in_hand and tile is not None else []
    pool = Counter(full_tile_set().tolist())
    pool.subtract(reserved + hand)
    if any(v < 0 for v in pool.values()):
        raise ValueError("the tile in hand and the upcoming tiles exceed the tile set")
    filler = [t for t in sorted(pool) for _ in range(pool[t])]
    n_fill = drawn - len(hand)
    if n_fill < 0:
        raise ValueError("drawn must count the tile in hand")
    deck = complete_deck(filler[:n_fill] + hand + reserved)
    return TaluvaState(game, cells, players, deck, meta)


# -- queries ------------------------------------------------------------------------------------


def legal_strings(state: TaluvaState) -> set[str]:
    """The legal actions of the player to move, in notation."""
    return {state.action_to_string(int(a)) for a in state.legal_actions()}


def builds(state: TaluvaState, kind: str | None = None) -> set[str]:
    """Legal builds in notation, optionally only one kind (``hut``, ``temple``, ``tower``,
    ``expand``)."""
    out = legal_strings(state)
    return {s for s in out if kind is None or s.startswith(kind + "@")}


def eruptions(state: TaluvaState) -> set[str]:
    """Legal tile placements whose volcano goes on a hex already on the table."""
    out = set()
    for a in state.legal_actions():
        v = int(a) // 6
        if state.cells[v, S.C_LEVEL] > 0:
            out.add(state.action_to_string(int(a)))
    return out


def hex_at(state: TaluvaState, q: int, r: int) -> tuple[int, str, str, int]:
    """``(level, terrain letter, building letter, owner)`` of the top of hex ``(q, r)``;
    terrain ``"-"`` on empty table, building ``"."`` when none."""
    c = state.game.board.cell(q, r)
    row = state.cells[c]
    t = Terrain(int(row[S.C_TERRAIN]))
    letter = "-" if t is Terrain.NONE else TERRAIN_LETTER[t]
    b = {0: ".", 1: "h", 2: "T", 3: "W"}[int(row[S.C_BUILDING])]
    return int(row[S.C_LEVEL]), letter, b, int(row[S.C_OWNER])


def settlements_of(state: TaluvaState, player: int) -> set[frozenset[tuple[int, int]]]:
    """The settlements of ``player`` as sets of hexes, by a plain Python flood fill (an
    implementation independent of :func:`kernels.settlements`)."""
    board = state.game.board
    cells = state.cells
    mine = {
        (int(board.q[c]), int(board.r[c]))
        for c in np.flatnonzero((cells[:, S.C_BUILDING] != 0) & (cells[:, S.C_OWNER] == player))
    }
    out: set[frozenset[tuple[int, int]]] = set()
    left = set(mine)
    while left:
        start = left.pop()
        group = {start}
        todo = [start]
        while todo:
            q, r = todo.pop()
            for dq, dr in DIRECTIONS:
                m = (q + dq, r + dr)
                if m in left:
                    left.remove(m)
                    group.add(m)
                    todo.append(m)
        out.add(frozenset(group))
    return out


def pieces_on_board(state: TaluvaState, player: int) -> tuple[int, int, int]:
    """``(huts, temples, towers)`` of ``player`` standing on the board (a hut hex holds as many
    huts as its level)."""
    cells = state.cells
    own = cells[:, S.C_OWNER] == player
    b = cells[:, S.C_BUILDING]
    huts = int(cells[own & (b == Building.HUT), S.C_LEVEL].astype(np.int64).sum())
    return huts, int((own & (b == Building.TEMPLE)).sum()), int((own & (b == Building.TOWER)).sum())


def state_arrays(state: TaluvaState) -> tuple[np.ndarray, ...]:
    """Copies of ``(cells, players, deck, meta)``."""
    return (state.cells.copy(), state.players.copy(), state.deck.copy(), state.meta.copy())


def same_arrays(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """True when two ``(cells, players, deck, meta)`` tuples are equal element for element."""
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def play_random_game(
    game: TaluvaGame,
    seed: int,
    agent: str = "random",
    agent_seed: int | None = None,
    on_decision: Any = None,
) -> tuple[TaluvaState, list[int]]:
    """Play one game with seeded tile draws (``state.draw()``) and a seeded agent.

    Args:
        on_decision: ``f(state)`` called at every decision before the agent acts.

    Returns:
        The final state and the applied decision ids (tile and build actions, in order).
    """
    from taluva_ai.agents import make_agent

    ag = make_agent(agent, seed=seed if agent_seed is None else agent_seed)
    state = game.new_initial_state(seed=seed)
    actions: list[int] = []
    while not state.is_terminal():
        if state.current_player == -1:
            state.draw()
            continue
        if on_decision is not None:
            on_decision(state)
        a = ag.act(state)
        actions.append(a)
        state.apply(a)
    return state, actions


#: The ``[net]`` section of a training config's smallest network (4 channels, one block).
TINY_NET = """[net]
preset = "tiny"
channels = 4
blocks = 1
global_hidden = 8
value_hidden = 8
"""

#: The body of a training config that runs in seconds (2-player Taluva with 4 tiles each, a
#: 4-channel network, 2 warm-start and 2 self-play games, 2 steps); see :func:`micro_run_config`.
_MICRO_RUN = f"""iterations = 1
workers = 1
device = "cpu"
torch_threads = 1

[game]
name = "taluva"
num_players = 2
tiles_per_player = 4

{TINY_NET}
[warm_start]
games = 2
expert = "heuristic"
steps = 2

[selfplay]
games = 2
parallel_games = 2
sims = 4
fast_sims = 2
full_search_prob = 1.0
root = "gumbel"
gumbel_m = 2
leaf_batch = 2
records = 1

[train]
steps = 2
batch_size = 8
"""


def micro_run_config(seed: int, tail: str) -> str:
    """A ``taluva train`` config (TOML) of one iteration after the warm start that runs in
    seconds, with ``seed`` and the ``tail`` sections (``[gating]``, ``[anchors]``)."""
    return f"seed = {seed}\n{_MICRO_RUN}\n{tail.strip()}\n"


def play_openspiel(state: Any, steps: int, seed: int = 0) -> Any:
    """Apply ``steps`` random actions (chance by its distribution) to an OpenSpiel state;
    returns it (stops at the end of the game)."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def spawned_children(pid: int) -> list[int]:
    """The ``multiprocessing`` worker processes (spawned) whose parent is ``pid`` (from
    /proc, Linux)."""
    from pathlib import Path

    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if ppid == pid and b"spawn_main" in (stat.parent / "cmdline").read_bytes():
                out.append(int(stat.parent.name))
        except OSError:  # ended meanwhile
            continue
    return out


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not; /proc)."""
    from pathlib import Path

    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def still_running(pids: Sequence[int], seconds: float = 10.0) -> list[int]:
    """The processes of ``pids`` still running after waiting up to ``seconds`` for all of
    them to end (polled every 10 ms)."""
    import time

    deadline = time.monotonic() + seconds
    while any(process_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    return [p for p in pids if process_running(p)]


def kill_running(pids: Sequence[int]) -> None:
    """SIGKILL those of ``pids`` still running (the clean-up of a test that starts them)."""
    import os
    import signal

    for p in pids:
        if process_running(p):
            os.kill(p, signal.SIGKILL)


def finished_training_run(tmp_path_factory: Any, name: str, config: str) -> Any:
    """A training run of the TOML ``config`` played to its end (one torch thread) in
    ``<a new temporary folder named name>/run``, its config beside it as ``<name>.toml``;
    returns the run directory (a ``Path``)."""
    import torch

    from taluva_ai.agents.alphazero.config import load_config
    from taluva_ai.agents.alphazero.train import TrainingRun

    out = tmp_path_factory.mktemp(name) / "run"
    path = out.parent / f"{name}.toml"
    path.write_text(config)
    torch.set_num_threads(1)
    TrainingRun(out, load_config(path), progress=False).run()
    return out


def random_aec_game(env: Any, rng: np.random.Generator,
                    before_action: Any = None) -> tuple[dict[str, float], int]:
    """Play a reset PettingZoo AEC env to its end, each agent taking a uniformly random legal
    action (its observation's ``action_mask``); ``before_action(agent)`` is called before
    each. Returns the rewards summed per agent (``possible_agents``) and the actions taken."""
    total = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        if before_action is not None:
            before_action(agent)
        ids = np.flatnonzero(obs["action_mask"])
        env.step(int(ids[rng.integers(ids.size)]))
        steps += 1
    return total, steps


def random_episode(env: Any, obs: Any, rng: np.random.Generator) -> tuple[list[float], Any]:
    """Step a Gymnasium env from its observation ``obs`` with uniformly random legal actions
    (``obs["action_mask"]``) until the episode ends. Returns the reward of every step, and the
    last step's ``(obs, reward, terminated, truncated, info)``."""
    rewards = []
    while True:
        legal = np.flatnonzero(obs["action_mask"])
        step = env.step(int(legal[rng.integers(legal.size)]))
        obs = step[0]
        rewards.append(step[1])
        if step[2] or step[3]:
            return rewards, step


def random_step(state: Any, rng: np.random.Generator) -> None:
    """One step of a random game through the protocol: the draw (``state.draw()``) at a
    chance node, else a uniformly random legal action (a decision must have one)."""
    if state.current_player < 0:
        state.draw()
    else:
        legal = state.legal_actions()
        assert legal.size > 0, "a decision without a legal action"
        state.apply(int(legal[rng.integers(legal.size)]))
