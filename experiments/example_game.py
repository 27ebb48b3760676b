"""The smallest complete game behind the protocol (docs/adding-a-game.md): Nim with a die.

21 sticks; a turn starts with a roll of a 2-sided die (a chance node) that says how many
sticks the player may take at most (1 or 2, or 3 on a roll of 2 with ``big=True``); the player
takes 1..max; whoever takes the last stick wins. Register it and every tool works::

    python experiments/example_game.py          # a game, a record, its replay, MCTS

Nothing in ``taluva_ai`` imports this file (experiments are single files).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.errors import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    WrongStepError,
)
from taluva_ai.protocol import CHANCE, TERMINAL, register_game


class NimGame:
    """The game's declared facts (OpenSpiel's ``Game``) and its initial states."""

    name = "nim"
    num_players = 2
    num_actions = 3  # action a takes a + 1 sticks
    max_chance_outcomes = 2  # the die: outcome o allows o + 1 (or o + 2) sticks
    max_game_length = 2 * 21

    def __init__(self, num_players: int = 2, sticks: int = 21, big: bool = False) -> None:
        if num_players != 2:  # tournaments pass num_players: accept it, check it
            raise ValueError(f"nim is a 2-player game, got num_players={num_players!r}")
        if not isinstance(sticks, int) or sticks < 1:
            raise ValueError(f"sticks must be a positive integer, got {sticks!r}")
        self.sticks, self.big = sticks, bool(big)

    def options(self) -> dict[str, Any]:
        return {"num_players": 2, "sticks": self.sticks, "big": self.big}

    def new_initial_state(self, seed: int | None = None) -> NimState:
        return NimState(self, self.sticks, seed)


class NimState:
    """One position: sticks left, the seat to move, the die's limit (0 before the roll)."""

    def __init__(self, game: NimGame, sticks: int, seed: int | None) -> None:
        self.game, self.sticks, self.player, self.limit = game, sticks, 0, 0
        self.seed = 0 if seed is None else int(seed)
        self.ply = 0

    @property
    def current_player(self) -> int:
        if self.sticks == 0:
            return TERMINAL
        return CHANCE if self.limit == 0 else self.player

    def is_terminal(self) -> bool:
        return self.sticks == 0

    def legal_actions(self) -> np.ndarray:
        if self.current_player < 0:
            return np.zeros(0, dtype=np.int64)
        return np.arange(min(self.limit, self.sticks), dtype=np.int64)

    def legal_action_mask(self) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, dtype=np.bool_)
        mask[self.legal_actions()] = True
        return mask

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.5)] if self.current_player == CHANCE else []

    def draw(self) -> int:
        if self.current_player != CHANCE:
            raise WrongStepError("draw", "no chance node")
        o = int(np.random.default_rng([self.seed, self.ply]).integers(2))
        self.apply(o)
        return o

    def apply(self, action: Any) -> None:
        a = self.parse_action(action) if isinstance(action, str) else action
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise NotationError(f"an action is an int id or notation, got {action!r}")
        a = int(a)
        if self.is_terminal():
            raise WrongStepError(action, "the game is over")
        if self.current_player == CHANCE:
            if a not in (0, 1):
                raise ActionOutOfRangeError(action, "a roll is 0 or 1")
            self.limit = a + 1 + (1 if self.game.big and a == 1 else 0)
        else:
            if not 0 <= a < self.game.num_actions:
                raise ActionOutOfRangeError(action, "action ids run from 0 to 2")
            if a >= min(self.limit, self.sticks):
                raise IllegalActionError(action, f"the die allows at most {self.limit} sticks "
                                         f"and {self.sticks} are left")
            self.sticks -= a + 1
            self.limit = 0
            if self.sticks:
                self.player = 1 - self.player
        self.ply += 1

    def returns(self) -> np.ndarray:
        out = np.zeros(2)
        if self.is_terminal():  # the player who took the last stick won
            out[self.player], out[1 - self.player] = 1.0, -1.0
        return out

    def clone(self) -> NimState:
        s = NimState(self.game, self.sticks, self.seed)
        s.player, s.limit, s.ply = self.player, self.limit, self.ply
        return s

    def observation(self, player: int) -> dict[str, int]:
        return {"sticks": self.sticks, "to_move": self.current_player, "limit": self.limit}

    def action_to_string(self, action: int) -> str:
        if self.current_player == CHANCE:
            return f"roll:{int(action) + 1}"
        return f"take:{int(action) + 1}"

    def parse_action(self, text: str) -> int:
        kind, _, arg = text.strip().partition(":")
        if kind not in ("take", "roll") or not arg.isdigit():
            raise NotationError(f"{text!r}: expected take:<n> or roll:<n>")
        if (kind == "roll") != (self.current_player == CHANCE):
            raise WrongStepError(text, "a roll only at a chance node, a take only after it")
        return int(arg) - 1


register_game("nim", NimGame)

if __name__ == "__main__":
    from taluva_ai import make_game
    from taluva_ai.records import replay_record
    from taluva_ai.tournament import make_agent, play_game

    game = make_game("nim", big=True)
    agents = [make_agent("mcts:sims=200,prior=none"), make_agent("random")]
    result = play_game(game, agents, seed=7, record_path="nim.jsonl")
    print("winners:", result.winners, "plies:", result.plies)
    print("replayed:", replay_record("nim.jsonl", seeded_draws=True).returns())
