"""Taluva and Thurn und Taxis as OpenSpiel games: the golden playthroughs and the stepping
benchmark (``python -m taluva_ai.openspiel playthrough | bench``; :mod:`taluva_ai.openspiel`,
docs/openspiel.md).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from taluva_ai.protocol import CHANCE

#: The golden playthroughs checked by tests/test_openspiel_conformance.py: file name, game
#: string, observation parameters, seed of OpenSpiel's playthrough tool (short games, so the
#: files stay small: the tool prints every observation tensor of the states it shows).
PLAYTHROUGHS = (
    ("python_taluva.txt", "python_taluva(tiles_per_player=3)", "obs(view_radius=2)", 1),
    ("python_thurn_und_taxis.txt", "python_thurn_und_taxis(max_rounds=2)", None, 1),
)


def write_playthroughs(out_dir: str) -> list[str]:
    """Generate the golden playthroughs of :data:`PLAYTHROUGHS` into ``out_dir`` with
    OpenSpiel's playthrough tool (``open_spiel.python.algorithms.generate_playthrough``);
    returns the paths written."""
    import os

    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()  # the tool reads an absl flag
    from open_spiel.python.algorithms import generate_playthrough

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, game_string, obs_params, seed in PLAYTHROUGHS:
        text = generate_playthrough.playthrough(game_string, [],
                                                observation_params_string=obs_params, seed=seed)
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append(path)
    return paths


def bench(game_string: str = "python_taluva", games: int = 3, seed: int = 0) -> dict[str, Any]:
    """Steps per second of uniformly random play (chance by its distribution) through the
    OpenSpiel game ``game_string`` and through the engine directly, on the same games (the same
    seeded choices give the same actions every way), after one untimed warm-up game.

    Ways: ``openspiel``: ``legal_actions`` / ``chance_outcomes`` and ``apply_action`` of the
    OpenSpiel state; ``native``: the same calls of the engine state with ``apply`` (which
    checks legality); ``native_unchecked``: ``apply_unchecked`` (what this project's search
    uses). Engine states record no undo history here.

    Returns:
        ``{"game", "games", "steps", "openspiel_steps_per_s", "native_steps_per_s",
        "native_unchecked_steps_per_s", "slowdown"}`` (``slowdown``: native rate / OpenSpiel
        rate).

    Raises:
        ValueError: ``games`` < 1.
    """
    import time

    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    game = pyspiel.load_game(game_string)

    def pick(outs: list[tuple[int, float]], u: float) -> int:
        cum = np.cumsum([p for _, p in outs])
        return int(outs[min(int(np.searchsorted(cum, u * cum[-1])), len(outs) - 1)][0])

    def native(picks: np.ndarray, checked: bool) -> tuple[int, str]:
        engine = game.new_initial_state().engine_state.clone()
        engine.record_history = False
        apply = engine.apply if checked else engine.apply_unchecked
        n = 0
        while not engine.is_terminal():
            if engine.current_player == CHANCE:
                a = pick(engine.chance_outcomes(), picks[n])
            else:
                legal = engine.legal_actions()
                a = int(legal[int(picks[n] * legal.size)])
            apply(a)
            n += 1
        return n, engine.to_position_string()

    def spiel(picks: np.ndarray) -> tuple[int, str]:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                a = pick(state.chance_outcomes(), picks[n])
            else:
                legal = state.legal_actions()
                a = legal[int(picks[n] * len(legal))]
            state.apply_action(a)
            n += 1
        return n, str(state)

    ways = {"openspiel": lambda p: spiel(p), "native": lambda p: native(p, True),
            "native_unchecked": lambda p: native(p, False)}
    warm = np.random.default_rng([seed, games]).random(100_000)
    for run in ways.values():
        run(warm)
    seconds = dict.fromkeys(ways, 0.0)
    steps = 0
    for g in range(games):
        picks = np.random.default_rng([seed, g]).random(100_000)  # one number per step
        ends = set()
        for name, run in ways.items():
            t = time.perf_counter()
            n, end = run(picks)
            seconds[name] += time.perf_counter() - t
            ends.add(end)
        if len(ends) != 1:
            raise AssertionError("the OpenSpiel game and the engine played different games")
        steps += n
    rate = {name: steps / s for name, s in seconds.items()}
    return {"game": str(game), "games": games, "steps": steps,
            **{f"{name}_steps_per_s": round(r, 1) for name, r in rate.items()},
            "slowdown": round(rate["native"] / rate["openspiel"], 2)}


def main(argv: list[str] | None = None) -> int:
    """``python -m taluva_ai.openspiel playthrough [--out DIR]`` regenerates the golden
    playthroughs; ``... bench [--game G] [--games N] [--seed S]`` prints :func:`bench` as
    JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m taluva_ai.openspiel",
                                     description="Taluva and Thurn und Taxis as OpenSpiel "
                                     "games (pip install 'taluva-ai[openspiel]').")
    sub = parser.add_subparsers(dest="command", required=True)
    pt = sub.add_parser("playthrough", help="regenerate the golden playthrough files")
    pt.add_argument("--out", default="tests/data/openspiel",
                    help="folder of the files (default tests/data/openspiel)")
    bp = sub.add_parser("bench", help="steps/s of random play through OpenSpiel and natively "
                        "(JSON)")
    bp.add_argument("--game", default="python_taluva",
                    help="OpenSpiel game string (default python_taluva)")
    bp.add_argument("--games", type=int, default=3, help="games (default 3)")
    bp.add_argument("--seed", type=int, default=0, help="seed of the choices (default 0)")
    args = parser.parse_args(argv)
    if args.command == "playthrough":
        for path in write_playthroughs(args.out):
            print(path)
    else:
        if args.games < 1:
            parser.error(f"--games must be at least 1, got {args.games}")
        print(json.dumps(bench(args.game, args.games, args.seed)))
    return 0
