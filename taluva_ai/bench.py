"""Engine throughput figures (``taluva bench``; DESIGN.md, Benchmarks).

Every figure is measured after a warm-up (the compiled kernels are loaded and run once),
repeated, and the median of the repeats is reported. One process, one thread.

- ``games_per_s[n]``: random full games of ``n`` players per second, with the dense legal mask
  (``bool[14H]``) computed at every decision (:func:`kernels.random_playout`); game ``i`` of a
  repeat starts from ``game.new_initial_state(seed=i)`` (default rules), so every repeat plays
  the same games. Making the initial states is not timed.
- ``tile_mask_us`` / ``build_mask_us``: mean microseconds per legal-mask computation at a tile
  step / a build step (:func:`kernels.tile_actions` / :func:`kernels.build_actions` and filling
  the dense mask), timed in a Numba-compiled loop over positions collected along seeded random
  2-player games, so no Python overhead is counted.
- ``decisions_per_game[n]``: mean decisions (tile and build steps) of those random games.
- ``solo.games_per_s`` (``--solo``): random full games of the solo variant (default solo
  rules, docs/solo.md) per second, dense legal mask (``bool[14H + 6]``) at every decision
  (:func:`kernels.random_playout`, the same loop); game ``i`` starts from
  ``new_initial_state(seed=i)`` (making the states is not timed); chance nodes take the
  seeded deck's next tile. ``solo.decisions_per_game``: their mean decisions.
- ``mcts.sims_per_s`` (``--mcts``): MCTS simulations per second in one process from a fixed
  2-player midgame (20 tiles placed by seeded random play, tile step), UCT with uniformly random
  rollouts to the end (``mcts:prior=none,rollout=random``), ``sims`` simulations per search.
  ``mcts.ladder``: the same for the strength ladder's MCTS-400 (``LADDER_SPEC``: greedy
  rollouts, heuristic priors, Gumbel root), and ``greedy_rollout_ms``, the mean time of one
  greedy rollout from that midgame to the end.
- ``net`` (``--net``, needs PyTorch): per AlphaZero network preset (2 players, default view),
  the parameter count and the CPU inference latency (ms per forward pass, median) and
  throughput (positions per second) at several batch sizes, with the torch thread count.
- ``compile`` (``--compile``): the CPU seconds of a first run, each command in a subprocess
  with an empty kernel cache, kernel by kernel, then warm (:mod:`taluva_ai.compile_bench`).

The long sections (``net``, ``selfplay``, ``inference``) report their progress, per network
and batch size, through ``say`` (``taluva bench`` prints it on stderr).
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.state import M_DRAWN, M_STEP, Step

#: A progress callback: called with one line (``taluva bench`` prints it on stderr).
Say = Callable[[str], None]


def _say(say: Say | None, line: str) -> None:
    if say is not None:
        say(line)


@njit(cache=True)
def _time_tile_masks(cells_b, meta_b, nbr, cell_of, origin, out, mask, loops):
    """Compute the tile-step legal mask of every position ``loops`` times; returns the total
    number of legal ids (so the work cannot be optimised away)."""
    total = 0
    for _ in range(loops):
        for i in range(cells_b.shape[0]):
            n = K.tile_actions(cells_b[i], meta_b[i], nbr, cell_of, origin, out,
                               np.bool_(False))  # the argument types of the rules' calls
            for j in range(n):
                mask[out[j]] = True
            for j in range(n):
                mask[out[j]] = False
            total += n
    return total


@njit(cache=True)
def _time_build_masks(cells_b, players_b, meta_b, rules, nbr, cell_of, out, mask, loops):
    """As :func:`_time_tile_masks` for the build step."""
    total = 0
    cost = np.empty(0, dtype=np.int64)
    for _ in range(loops):
        for i in range(cells_b.shape[0]):
            n = K.build_actions(cells_b[i], players_b[i], meta_b[i], rules, nbr, cell_of, out,
                                np.bool_(False), cost)
            for j in range(n):
                mask[out[j]] = True
            for j in range(n):
                mask[out[j]] = False
            total += n
    return total


def _playouts(game: TaluvaGame, games: int) -> tuple[float, float]:
    """Time ``games`` random playouts; returns ``(seconds, mean decisions)``."""
    rules, nbr, cell_of, hexqr, origin = game.kernel_args()
    mask = np.zeros(game.num_actions, dtype=np.bool_)
    states = [game.new_initial_state(seed=i) for i in range(games)]
    playout = K.random_playout if game.rules.solo else K.standard_random_playout
    decisions = 0
    t0 = time.perf_counter()
    for i, s in enumerate(states):
        decisions += playout(s.cells, s.players, s.deck, s.meta, rules, nbr, cell_of, hexqr,
                             origin, mask, i)
    dt = time.perf_counter() - t0
    return dt, decisions / games


def collect_positions(
    game: TaluvaGame, games: int, seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Positions at the tile steps and at the build steps of ``games`` seeded random games.

    Game ``i`` starts from ``game.new_initial_state(seed=seed + i)`` and plays uniformly random
    legal actions (``numpy.random.default_rng(seed + i)``).

    Returns:
        ``(tile, build)``, each ``{"cells": int8[N, H, 5], "players": int16[N, 4, 8],
        "meta": int32[N, 32]}``.
    """
    tiles: dict[str, list[np.ndarray]] = {"cells": [], "players": [], "meta": []}
    builds: dict[str, list[np.ndarray]] = {"cells": [], "players": [], "meta": []}
    for i in range(games):
        rng = np.random.default_rng(seed + i)
        s = game.new_initial_state(seed=seed + i)
        while not s.is_terminal():
            step = int(s.meta[M_STEP])
            if step == Step.CHANCE:
                s.apply(int(s.deck[int(s.meta[M_DRAWN])]))
                continue
            dest = tiles if step == Step.TILE else builds
            dest["cells"].append(s.cells.copy())
            dest["players"].append(s.players.copy())
            dest["meta"].append(s.meta.copy())
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))
    return (
        {k: np.stack(v) for k, v in tiles.items()},
        {k: np.stack(v) for k, v in builds.items()},
    )


def bench_engine(
    games: int = 20, repeats: int = 5, mask_games: int = 8, mask_loops: int = 5
) -> dict[str, Any]:
    """The ``engine`` section of the benchmark (see the module docstring).

    Args:
        games: random games per player count and repeat.
        repeats: repeats of every measurement (the median is reported).
        mask_games: random 2-player games whose positions are timed for the mask figures.
        mask_loops: passes over those positions per repeat.

    Returns:
        ``{"games_per_s": {"2": float, "3": float, "4": float}, "tile_mask_us": float,
        "build_mask_us": float, "decisions_per_game": {"2": float, ...}, "positions":
        {"tile": int, "build": int}, "repeats": int, "games": int}``; rates rounded to 3
        significant decimals.

    Raises:
        ValueError: ``games``, ``repeats``, ``mask_games`` or ``mask_loops`` below 1.
    """
    for name, v in (("games", games), ("repeats", repeats), ("mask_games", mask_games),
                    ("mask_loops", mask_loops)):
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    games_per_s: dict[str, float] = {}
    decisions: dict[str, float] = {}
    for n in (2, 3, 4):
        game = TaluvaGame(num_players=n)
        _playouts(game, 1)  # warm-up: loads the compiled kernels
        rates = []
        mean_dec = 0.0
        for _ in range(repeats):
            dt, mean_dec = _playouts(game, games)
            rates.append(games / dt)
        games_per_s[str(n)] = round(statistics.median(rates), 2)
        decisions[str(n)] = round(mean_dec, 2)

    game = TaluvaGame(num_players=2)
    rules, nbr, cell_of, _, origin = game.kernel_args()
    tile, build = collect_positions(game, mask_games)
    out = np.empty(8 * game.num_cells, dtype=np.int64)
    mask = np.zeros(game.num_actions, dtype=np.bool_)
    _time_tile_masks(tile["cells"][:1], tile["meta"][:1], nbr, cell_of, origin, out, mask, 1)
    _time_build_masks(build["cells"][:1], build["players"][:1], build["meta"][:1], rules, nbr,
                      cell_of, out, mask, 1)
    tile_us, build_us = [], []
    nt, nb = tile["cells"].shape[0], build["cells"].shape[0]
    for _ in range(repeats):
        t0 = time.perf_counter()
        _time_tile_masks(tile["cells"], tile["meta"], nbr, cell_of, origin, out, mask,
                         mask_loops)
        tile_us.append((time.perf_counter() - t0) / (nt * mask_loops) * 1e6)
        t0 = time.perf_counter()
        _time_build_masks(build["cells"], build["players"], build["meta"], rules, nbr, cell_of,
                          out, mask, mask_loops)
        build_us.append((time.perf_counter() - t0) / (nb * mask_loops) * 1e6)
    return {
        "games_per_s": games_per_s,
        "tile_mask_us": round(statistics.median(tile_us), 2),
        "build_mask_us": round(statistics.median(build_us), 2),
        "decisions_per_game": decisions,
        "positions": {"tile": nt, "build": nb},
        "repeats": repeats,
        "games": games,
    }


def machine_info() -> dict[str, Any]:
    """``{"cpu": str, "threads": int, "versions": {"python", "numpy", "numba", "taluva_ai"},
    "platform": str}`` of this machine (``threads``: CPUs available to this process)."""
    import numba

    import taluva_ai

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        threads = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        threads = os.cpu_count() or 1
    return {
        "cpu": cpu,
        "threads": threads,
        "versions": {
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "numba": numba.__version__,
            "taluva_ai": taluva_ai.__version__,
        },
        "platform": platform.platform(),
    }


def midgame_state(seed: int = 3, tiles: int = 20) -> Any:
    """The fixed 2-player position the MCTS benchmark searches from: ``tiles`` tiles placed by
    seeded uniformly random play, at the next tile step."""
    game = TaluvaGame(num_players=2)
    state = game.new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    while state.tiles_placed < tiles or state.current_player < 0:
        if state.current_player < 0:
            state.draw()
        else:
            legal = state.legal_actions()
            state.apply(int(legal[rng.integers(legal.size)]))
    return state


def bench_mcts(sims: int = 2000, repeats: int = 5, game: str = "taluva") -> dict[str, Any]:
    """``{"sims_per_s": median, "sims": sims, "repeats": repeats, "spec": agent spec}``, from
    the game's fixed midgame (Thurn und Taxis: ``games.thurn_und_taxis.bench.midgame_state``;
    its hidden information makes MCTS search one determinization per move)."""
    import importlib

    agents = importlib.import_module("taluva_ai.agents")  # by name: the core imports no agent
    spec = mcts_specs(sims, game)[0]
    state = bench_midgame(game)
    out: dict[str, Any] = {"sims_per_s": _search_rate(agents.make_agent(spec, seed=0), state,
                                                      repeats),
                           "sims": sims, "repeats": repeats, "spec": spec}
    if game == "taluva":
        out["ladder"] = _bench_ladder_agent(agents, state, repeats)
    return out


def mcts_specs(sims: int, game: str = "taluva") -> list[str]:
    """The agent specs :func:`bench_mcts` times: UCT with random rollouts at ``sims``
    simulations, and for Taluva the ladder's MCTS-400 (:data:`LADDER_SPEC`)."""
    spec = f"mcts:sims={sims},prior=none,rollout=random"
    return [spec, LADDER_SPEC] if game == "taluva" else [spec]


def bench_midgame(game: str) -> Any:
    """The fixed midgame :func:`bench_mcts` searches from (Thurn und Taxis:
    ``games.thurn_und_taxis.bench.midgame_state``)."""
    if game == "thurn_und_taxis":
        from taluva_ai.games.thurn_und_taxis.bench import midgame_state as tnt_midgame

        return tnt_midgame()
    return midgame_state()


LADDER_SPEC = "mcts:sims=400,rollout=greedy,root=gumbel"


def _bench_ladder_agent(agents: Any, state: Any, repeats: int) -> dict[str, Any]:
    """The strength ladder's MCTS-400 (``LADDER_SPEC``: greedy rollouts, heuristic priors,
    Gumbel root) from the same midgame: median simulations per second of ``repeats``
    searches, and the mean milliseconds of one greedy rollout from there (300 rollouts)."""
    rate = _search_rate(agents.make_agent(LADDER_SPEC, seed=0), state, repeats)
    t = time.perf_counter()
    for i in range(300):
        state.rollout("greedy", i, 8)
    rollout_ms = (time.perf_counter() - t) / 300 * 1e3
    return {"spec": LADDER_SPEC, "sims_per_s": rate, "greedy_rollout_ms": round(rollout_ms, 3)}


def _search_rate(agent: Any, state: Any, repeats: int) -> float:
    """Median simulations per second of ``repeats`` searches of ``state`` by an MCTS
    ``agent`` (reseeded 0, 1, ...), after one untimed search (compilation)."""
    return _search_rates(agent, state, repeats)[0]


def _search_rates(agent: Any, state: Any, repeats: int) -> tuple[float, float]:
    """:func:`_search_rate` per second of wall time and per second of this process's CPU
    time (medians of the same searches)."""
    agent.act(state)
    rates, cpu_rates = [], []
    for r in range(repeats):
        agent.reset(r)
        t, c = time.perf_counter(), time.process_time()
        agent.act(state)
        n = agent.stats()["simulations"]
        rates.append(n / (time.perf_counter() - t))
        cpu_rates.append(n / max(time.process_time() - c, 1e-9))
    return round(statistics.median(rates), 1), round(statistics.median(cpu_rates), 1)


def bench_net(batch_sizes: tuple[int, ...] = (1, 16, 64, 256), repeats: int = 5,
              min_seconds: float = 0.2, say: Say | None = None) -> dict[str, Any]:
    """The ``net`` section: ``{preset: {"parameters": int, "latency_ms": {batch: float},
    "positions_per_s": {batch: float}}, "threads": int, "device": "cpu", "batch_sizes": [...]}``.

    Each repeat times forward passes (``torch.inference_mode``, eval mode) for at least
    ``min_seconds``; the median over repeats is reported. Inputs are encoded positions of a
    2-player midgame (:func:`midgame_state`). ``say``: called with a line before each preset
    and batch size (the command prints it on stderr).
    """
    import importlib

    import torch

    enc_mod = importlib.import_module("taluva_ai.agents.alphazero.encoder")
    net_mod = importlib.import_module("taluva_ai.agents.alphazero.net")
    encoder = enc_mod.make_encoder("taluva", 2)
    e = encoder.encode(midgame_state())
    out: dict[str, Any] = {}
    for i, preset in enumerate(net_mod.PRESETS):
        net = net_mod.build_net(encoder, net_mod.NetConfig(preset)).eval()
        lat: dict[str, float] = {}
        thr: dict[str, float] = {}
        for j, b in enumerate(batch_sizes):
            _say(say, f"bench --net: {preset} ({i + 1}/{len(net_mod.PRESETS)}), batch {b} "
                 f"({j + 1}/{len(batch_sizes)})")
            sp = torch.from_numpy(np.repeat(e.spatial[None], b, axis=0)).float()
            gl = torch.from_numpy(np.repeat(e.globals[None], b, axis=0))
            times = []
            with torch.inference_mode():
                net(sp, gl)  # warm-up
                for _ in range(repeats):
                    n = 0
                    t0 = time.perf_counter()
                    while True:
                        net(sp, gl)
                        n += 1
                        dt = time.perf_counter() - t0
                        if dt >= min_seconds:
                            break
                    times.append(dt / n)
            med = statistics.median(times)
            lat[str(b)] = round(med * 1e3, 3)
            thr[str(b)] = round(b / med, 1)
        out[preset] = {"parameters": net_mod.parameter_count(net), "latency_ms": lat,
                       "positions_per_s": thr}
    out["threads"] = torch.get_num_threads()
    out["device"] = "cpu"
    out["batch_sizes"] = list(batch_sizes)
    return out


def bench_inference(presets: tuple[str, ...] = ("tiny", "small", "medium"),
                    batch_sizes: tuple[int, ...] = (1, 8, 16, 32, 64, 128, 256),
                    view_radii: tuple[int, ...] = (13, 11), min_seconds: float = 0.3,
                    repeats: int = 3, say: Say | None = None) -> dict[str, Any]:
    """The ``inference`` section: CPU inference of each network preset (2 players) at each view
    radius with each backend, side by side in one process, one thread: PyTorch eager
    (``torch``) and ONNX Runtime (``onnx``, when installed; the backend the search uses).
    (TorchScript was measured too until PyTorch deprecated ``torch.jit.trace``; it was never
    the fastest at a batch the search uses: docs/alphazero.md.)

    For each ``(preset, radius, backend, batch)``: positions per second of wall time and per
    second of this process's CPU time (the per-core figure on a shared machine), the best of
    ``repeats`` runs of at least ``min_seconds`` each, runs of the backends interleaved so a
    change of the machine's load hits them alike. Inputs: a 2-player midgame's encoding
    repeated ``batch`` times. ``fastest``: the backend with the most positions per CPU second at
    each batch size. ``say``: called with a line before each network and batch size.
    """
    import importlib

    torch = importlib.import_module("torch")
    torch.set_num_threads(1)
    enc_mod = importlib.import_module("taluva_ai.agents.alphazero.encoder")
    net_mod = importlib.import_module("taluva_ai.agents.alphazero.net")
    try:
        importlib.import_module("onnxruntime")
        have_onnx = True
    except ImportError:
        have_onnx = False
    out: dict[str, Any] = {"batch_sizes": list(batch_sizes), "threads": 1, "results": []}
    state = midgame_state()
    nets = len(view_radii) * len(presets)
    k = 0
    for radius in view_radii:
        encoder = enc_mod.make_encoder("taluva", 2, view_radius=radius)
        e = encoder.encode(state)
        for preset in presets:
            k += 1
            net = net_mod.build_net(encoder, net_mod.NetConfig(preset)).eval()
            backends: dict[str, Any] = {}

            def eager(sp: Any, gl: Any, _net: Any = net) -> Any:
                with torch.inference_mode():
                    return _net(torch.from_numpy(sp), torch.from_numpy(gl))

            backends["torch"] = eager
            if have_onnx:
                backends["onnx"] = net_mod.onnx_forward(net, encoder, threads=1)
            for j, b in enumerate(batch_sizes):
                _say(say, f"bench --inference: {preset} at view radius {radius} ({k}/{nets}), "
                     f"batch {b} ({j + 1}/{len(batch_sizes)})")
                sp = np.repeat(e.spatial[None].astype(np.float32), b, axis=0)
                gl = np.repeat(e.globals[None], b, axis=0)
                best: dict[str, tuple[float, float]] = {k: (0.0, 0.0) for k in backends}
                for fn in backends.values():
                    fn(sp, gl)  # warm-up
                for _ in range(repeats):
                    for name, fn in backends.items():
                        n = 0
                        c0, t0 = time.process_time(), time.perf_counter()
                        while time.perf_counter() - t0 < min_seconds:
                            fn(sp, gl)
                            n += 1
                        wall = b * n / (time.perf_counter() - t0)
                        cpu = b * n / max(time.process_time() - c0, 1e-9)
                        if cpu > best[name][1]:
                            best[name] = (wall, cpu)
                for name, (wall, cpu) in best.items():
                    out["results"].append({
                        "preset": preset, "view_radius": radius, "backend": name, "batch": b,
                        "parameters": net_mod.parameter_count(net),
                        "positions_per_s": round(wall, 1),
                        "positions_per_cpu_s": round(cpu, 1)})
    fastest: dict[str, dict[str, str]] = {}
    for r in out["results"]:
        key = f"{r['preset']}@r{r['view_radius']}"
        cur = fastest.setdefault(key, {})
        prev = [x for x in out["results"] if x["preset"] == r["preset"]
                and x["view_radius"] == r["view_radius"] and x["batch"] == r["batch"]]
        cur[str(r["batch"])] = max(prev, key=lambda x: x["positions_per_cpu_s"])["backend"]
    out["fastest"] = fastest
    return out


#: The self-play of the 2-player recipe (``experiments/configs/builtin-2p.toml``) as
#: ``bench_selfplay`` measures it: its network (``[net]``, ``[encoder]``) and its ``[selfplay]``
#: search from iteration 31 on (no rollouts mixed into the leaf values; 170 of its 200
#: iterations). tests/test_mcts_batched.py checks these against the config file.
RECIPE_2P: dict[str, Any] = {
    "net": "tiny/1x1", "view_radius": 11, "build_sites": True, "aux_head": True,
    "parallel_games": 32, "sims": 64, "fast_sims": 16, "full_search_prob": 0.25,
    "gumbel_m": 16, "leaf_batch": 8, "temperature_decisions": 16,
}


def bench_selfplay(presets: tuple[str, ...] = ("tiny", "tiny@11", "tiny@11/1x1", "small"),
                   games: int = 16,
                   parallel_games: int = 16, sims: int = 64, leaf_batch: int = 8,
                   rollout_sims: int = 2000, repeats: int = 3,
                   backend: str = "auto", max_batch: int | None = None,
                   say: Say | None = None, recipe_games: int = 32) -> dict[str, Any]:
    """The ``selfplay`` section: network-guided self-play speed, one process, one thread.

    Per preset (``name`` or ``name@view_radius``, then any ``/1x1`` or ``/size=N`` of
    :meth:`NetConfig.parse <taluva_ai.agents.alphazero.config.NetConfig.parse>`, ``/1x1``
    being a 1 x 1 stem convolution, ``[net] stem_kernel = 1``; a freshly initialised 2-player
    network over the default view or that radius; the speed does not depend on the weights,
    only the game lengths do a little): ``games`` self-play games, ``parallel_games`` at a
    time (:class:`~taluva_ai.agents.alphazero.selfplay.SelfPlay`, Gumbel root, ``sims``
    simulations per move, every move recorded, ``leaf_batch`` leaves per game and round, no
    rollouts: the compiled batched search of ``agents/search/batched.py``), timed after one
    untimed game (compilation, inference warm-up). Reports ``sims_per_s`` (network-guided
    simulations per second of wall time), ``sims_per_cpu_s`` (per second of this process's CPU
    time: the per-core figure on a shared machine), ``positions_per_s`` (recorded training
    positions), ``evaluations``, the share of time in the network (``net_share``) and
    ``max_batch``, the chunk in which the network evaluates a batch (``max_batch`` here, else
    the evaluator's default: 16 for ONNX Runtime).

    Then the preset ``builtin-2p`` (``recipe_games`` games; 0 leaves it out): the 2-player
    recipe's self-play, :data:`RECIPE_2P` (its network with the build-site inputs, 32 games
    at once, 64 simulations on a quarter of the moves and 16 on the others, KataGo's playout
    cap randomisation), with its settings in its entry.

    Beside them, in the same invocation, ``rollout_mcts_sims_per_s`` and
    ``rollout_mcts_sims_per_cpu_s``: the compiled rollout MCTS of ``--mcts`` (UCT, random
    rollouts, ``rollout_sims`` per search, median of ``repeats``) from the same machine state,
    and per preset ``ratio`` and ``ratio_cpu``: network-guided over rollout simulations per
    second of wall time and of CPU time (the per-core ratio; the machine-independent figure).
    ``say``: called with a line before each network's warm-up game and timed games, and before
    the rollout MCTS.
    """
    import importlib

    torch = importlib.import_module("torch")
    torch.set_num_threads(1)
    enc_mod = importlib.import_module("taluva_ai.agents.alphazero.encoder")
    cfg_mod = importlib.import_module("taluva_ai.agents.alphazero.config")
    agents = importlib.import_module("taluva_ai.agents")
    spc = cfg_mod.SelfPlaySection(games=games, parallel_games=parallel_games, sims=sims,
                                  fast_sims=sims, full_search_prob=1.0, root="gumbel",
                                  gumbel_m=16, leaf_batch=leaf_batch, records=0)
    out: dict[str, Any] = {"games": games, "parallel_games": parallel_games, "sims": sims,
                           "leaf_batch": leaf_batch}
    runs: list[tuple[str, Any, Any, Any, int]] = []
    for preset in presets:
        head, sep, tail = preset.partition("/")
        name, _, radius = head.partition("@")
        encoder = enc_mod.make_encoder("taluva", 2, view_radius=int(radius) if radius else None)
        runs.append((preset, encoder, cfg_mod.NetConfig.parse(name + sep + tail), spc, games))
    if recipe_games:
        r = RECIPE_2P
        encoder = enc_mod.make_encoder("taluva", 2, view_radius=r["view_radius"],
                                       build_sites=r["build_sites"])
        shape = cfg_mod.NetConfig.parse(r["net"] + ("/aux" if r["aux_head"] else ""))
        rspc = cfg_mod.SelfPlaySection(
            games=recipe_games, parallel_games=r["parallel_games"], sims=r["sims"],
            fast_sims=r["fast_sims"], full_search_prob=r["full_search_prob"], root="gumbel",
            gumbel_m=r["gumbel_m"], leaf_batch=r["leaf_batch"],
            temperature_decisions=r["temperature_decisions"], records=0)
        runs.append(("builtin-2p", encoder, shape, rspc, recipe_games))
    for i, (preset, encoder, shape, sp_cfg, n_games) in enumerate(runs):
        where = f"bench --selfplay: {preset} ({i + 1}/{len(runs)})"
        out[preset] = _selfplay_rate(encoder, shape, sp_cfg, n_games, backend, max_batch,
                                     where, say)
    if recipe_games:
        out["builtin-2p"]["settings"] = dict(RECIPE_2P)
    _say(say, f"bench --selfplay: the rollout MCTS ({repeats} searches of {rollout_sims} "
         "simulations)")
    rate, cpu_rate = _search_rates(agents.make_agent(f"mcts:sims={rollout_sims},prior=none,"
                                                     "rollout=random", seed=0),
                                   midgame_state(), repeats)
    out["rollout_mcts_sims_per_s"] = rate
    out["rollout_mcts_sims_per_cpu_s"] = cpu_rate
    for preset, *_ in runs:
        out[preset]["ratio"] = round(out[preset]["sims_per_s"] / rate, 3)
        out[preset]["ratio_cpu"] = round(out[preset]["sims_per_cpu_s"] / cpu_rate, 3)
    return out


def _selfplay_rate(encoder: Any, shape: Any, spc: Any, games: int, backend: str,
                   max_batch: int | None, where: str, say: Say | None) -> dict[str, Any]:
    """One entry of :func:`bench_selfplay`: ``games`` self-play games of a freshly initialised
    network of ``shape`` over ``encoder`` with the ``[selfplay]`` settings ``spc``, timed
    after one untimed game."""
    import importlib

    torch = importlib.import_module("torch")
    net_mod = importlib.import_module("taluva_ai.agents.alphazero.net")
    ev_mod = importlib.import_module("taluva_ai.agents.alphazero.evaluator")
    sp_mod = importlib.import_module("taluva_ai.agents.alphazero.selfplay")
    rep_mod = importlib.import_module("taluva_ai.agents.alphazero.replay")
    game = TaluvaGame(num_players=2)
    torch.manual_seed(0)
    net = net_mod.build_net(encoder, shape).eval()
    ev = ev_mod.NetEvaluator(net, encoder, "cpu", seed=0, backend=backend, max_batch=max_batch)
    timed = {"infer": 0.0}
    infer = ev.infer_arrays

    def timed_infer(sp: Any, gl: Any) -> Any:
        t = time.perf_counter()
        res = infer(sp, gl)
        timed["infer"] += time.perf_counter() - t
        return res

    ev.infer_arrays = timed_infer
    sp = sp_mod.SelfPlay(game, encoder, ev, spc)
    _say(say, f"{where}: an untimed game (on a first run it compiles the search)")
    sp.play([(0, 10_000, 10_001)], rep_mod.SampleBuilder(encoder))  # warm-up
    _say(say, f"{where}: {games} timed games, {spc.parallel_games} at a time")
    timed["infer"] = 0.0
    seeds = [(g, *sp_mod.game_seeds(0, 1, g)) for g in range(games)]
    ev.evaluations = 0
    c0, t0 = time.process_time(), time.perf_counter()
    summaries = sp.play(seeds, rep_mod.SampleBuilder(encoder))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    simulations = sum(x.simulations for x in summaries)
    samples = sum(x.samples for x in summaries)
    return {
        "parameters": net_mod.parameter_count(net), "backend": ev.backend,
        "max_batch": ev.max_batch, "view_radius": encoder.view_radius,
        "stem_kernel": shape.stem_kernel,
        "sims_per_s": round(simulations / wall, 1),
        "sims_per_cpu_s": round(simulations / cpu, 1),
        "positions_per_s": round(samples / wall, 2),
        "evaluations": ev.evaluations, "simulations": simulations, "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2), "net_share": round(timed["infer"] / wall, 3),
    }


def bench_solo(games: int = 200, repeats: int = 5) -> dict[str, Any]:
    """The ``solo`` section (module docstring): ``{"games_per_s": float,
    "decisions_per_game": float, "repeats": int, "games": int}``.

    Raises:
        ValueError: ``games`` or ``repeats`` below 1.
    """
    if games < 1 or repeats < 1:
        raise ValueError("games and repeats must be >= 1")
    game = TaluvaGame(solo=True)
    _playouts(game, 2)  # warm-up: the kernels are compiled or loaded
    rates, decisions = [], 0.0
    for _ in range(repeats):
        dt, decisions = _playouts(game, games)
        rates.append(games / dt)
    return {"games_per_s": round(statistics.median(rates), 3),
            "decisions_per_game": round(decisions, 3), "repeats": repeats, "games": games}


def bench_problem(game: str, solo: bool = False, net: bool = False, selfplay: bool = False,
                  inference: bool = False) -> str | None:
    """Why :func:`run_bench` refuses these choices, in one line, or None. The game must be
    ``"taluva"`` or ``"thurn_und_taxis"``; ``solo`` (Taluva's solo variant) and the network
    sections (``net``, ``selfplay``, ``inference``: Taluva's encoder and presets) are Taluva's
    only."""
    if game not in ("taluva", "thurn_und_taxis"):
        return f"--game: no benchmark for {game!r}; known: taluva, thurn_und_taxis"
    taluva_only = [flag for flag, on in (("--solo", solo), ("--net", net),
                                         ("--selfplay", selfplay), ("--inference", inference))
                   if on]
    if taluva_only and game != "taluva":
        return f"{', '.join(taluva_only)}: Taluva only; use without --game {game}"
    return None


def run_bench(games: int = 20, repeats: int = 5, mask_games: int = 8, engine: bool = True,
              mcts: bool = False, mcts_sims: int = 2000, env: bool = False,
              net: bool = False, game: str = "taluva", solo: bool = False,
              selfplay: bool = False, inference: bool = False,
              max_batch: int | None = None, say: Say | None = None, compiling: bool = False,
              compile_commands: list[list[str]] | None = None) -> dict[str, Any]:
    """DESIGN.md's JSON shape: ``{"engine": ..., "solo": ..., "mcts": ..., "env": ...,
    "net": ..., "machine": ...}``, each section present when asked for (``env`` needs the
    ``envs`` extra, ``net`` PyTorch). ``game``: ``"taluva"`` or ``"thurn_und_taxis"`` (its
    engine section: ``taluva_ai.games.thurn_und_taxis.bench``; its ``env`` section: the
    ``ThurnUndTaxisVectorEnv`` at batch 1, 64, 256); ``solo``: random solo games (Taluva only);
    ``max_batch``: the self-play section's network chunk (:func:`bench_selfplay`); ``say``:
    called with a line of progress in the long sections (``mcts`` and ``env``: before each;
    ``net``, ``selfplay``, ``inference``: per network and batch size; with ``say``, ``mcts``
    first runs :func:`taluva_ai.warmup.warm_up` of its agents, and ``env`` runs under
    :func:`taluva_ai.warmup.compile_lines`, so a first run's compilation shows its progress
    on stderr); ``compiling``: the
    ``compile`` section first (:func:`taluva_ai.compile_bench.bench_compile` of
    ``compile_commands``, ``taluva``'s arguments, default
    :data:`~taluva_ai.compile_bench.COMMANDS`), a cold and a warm run of each command in a
    subprocess of its own.

    Raises:
        ImportError: ``env`` without gymnasium or ``net`` without torch installed.
        ValueError: an unknown game, or a Taluva-only section for Thurn und Taxis
            (:func:`bench_problem`).
    """
    problem = bench_problem(game, solo=solo, net=net, selfplay=selfplay, inference=inference)
    if problem:
        raise ValueError(problem)
    out: dict[str, Any] = {}
    if compiling:  # first: subprocesses, each with an empty kernel cache of its own
        from taluva_ai.compile_bench import COMMANDS, bench_compile

        out["compile"] = bench_compile(compile_commands or [list(c) for c in COMMANDS])
    if engine:
        if game == "thurn_und_taxis":
            from taluva_ai.games.thurn_und_taxis.bench import bench_engine as tnt_engine

            out["engine"] = tnt_engine(games, repeats)
        else:
            out["engine"] = bench_engine(games, repeats, mask_games)
    if solo:
        out["solo"] = bench_solo(games, repeats)
    if mcts:
        ladder = ", then the ladder's MCTS-400 with greedy rollouts" if game == "taluva" else ""
        _say(say, f"bench --mcts: UCT with random rollouts, {repeats} search"
                  f"{'es' if repeats != 1 else ''} of {mcts_sims} "
                  f"simulations{ladder}")
        if say is not None:  # the command line: the first run's compilation shows its progress
            from taluva_ai.protocol import make_game
            from taluva_ai.warmup import warm_up

            warm_up(make_game(game), mcts_specs(mcts_sims, game))
        out["mcts"] = bench_mcts(mcts_sims, repeats, game)
    if env:
        import importlib

        bench_env = importlib.import_module("taluva_ai.envs.bench").bench_env
        sizes = (1, 64, 256, 1024) if game == "taluva" else (1, 64, 256)
        _say(say, f"bench --env: VectorEnv steps at batch {', '.join(map(str, sizes))}, "
                  f"{repeats} repeats each")
        if say is None:
            out["env"] = bench_env(sizes, repeats=repeats, game=game)
        else:  # the command line: a first run's compilation prints its lines
            from taluva_ai.warmup import compile_lines

            with compile_lines("bench --env"):
                out["env"] = bench_env(sizes, repeats=repeats, game=game)
    if net:
        out["net"] = bench_net(repeats=repeats, say=say)
    if selfplay:
        out["selfplay"] = bench_selfplay(repeats=repeats, max_batch=max_batch, say=say)
    if inference:
        out["inference"] = bench_inference(say=say)
    out["machine"] = machine_info()
    return out
