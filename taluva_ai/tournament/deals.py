"""Deals: what every group of a tournament plays once per seat rotation (duplicate play).

A deal is a game seed and, for a game with a deck (Taluva), its draw order (:class:`Deal`).
Deal ``d`` of a tournament of seed ``seed`` has seed ``SeedSequence([seed, d])``'s first word
(:func:`deal_seed`, :func:`seed_deals`); or the deals come from a deal file (JSON Lines, one
deal a line: :func:`read_deals`, written by :func:`deals_text`; docs/tournaments.md), so that
two runs play the same deals whatever their seeds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.protocol import Game
from taluva_ai.runfiles import read_regular
from taluva_ai.tournament.play import _parse_deck


def deal_seed(seed: int, deal: int) -> int:
    """Seed of deal ``deal`` of a tournament of seed ``seed`` (shared by all groups)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1)[0])


@dataclass(frozen=True)
class Deal:
    """One deal of a tournament: every group plays it once per seat rotation.

    Attributes:
        seed: the game seed: it seeds each seat's agent (:func:`agent_seeds`) and, without a
            ``deck``, shuffles the deck (``game.new_initial_state(seed)``).
        deck: for a game with a deck (Taluva), the explicit draw order as the game's names
            (``game.parse_deck``; Taluva: 48 tile names such as ``"JC"``, a shorter list
            completed in type order), or None.
    """

    seed: int
    deck: tuple[str, ...] | None = None

    def to_json(self, index: int) -> dict[str, Any]:
        """The deal's line of a deal file: ``{"deal": index, "seed": ..., "deck": [...]}``
        (no ``deck`` key without one)."""
        out: dict[str, Any] = {"deal": index, "seed": self.seed}
        if self.deck is not None:
            out["deck"] = list(self.deck)
        return out


#: The most deals a run writes to its own deal file (``deals.jsonl``) when its deals come from
#: its seed: a larger run computes each deal when it plays it and writes no deal file.
DEALS_FILE_MAX = 100_000


#: Keys of a deal file's lines.
DEAL_KEYS = ("deal", "seed", "deck")


def read_deals(path: str | Path, game: Game | None = None) -> list[Deal]:
    """The deals of a deal file (docs/tournaments.md): JSON Lines, one deal a line,
    ``{"seed": S, "deck": ["JC", "SR", ...]}`` (``deck`` optional, for a game with a deck;
    ``deal``, optional, is the line's 0-based deal index and is checked); blank lines are
    skipped. With ``game``, each deck is checked to be one of its draw orders.

    Raises:
        ValueError: the file holds no deal, a line is not a JSON object, has an unknown key, a
            seed that is not an integer in 0 .. 2**64 - 1, a deck that is not a list of names
            (or not the game's), or a ``deal`` index out of order; the message names the file,
            the line and the key.
        OSError: the file cannot be read.
    """
    p = Path(path)
    try:
        lines = read_regular(p, "a deal file").decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not UTF-8 text: {e}") from None
    deals: list[Deal] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{p}: line {i}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise ValueError(f"{where}: not JSON ({e})") from None
        deals.append(_deal_of(obj, where, len(deals), game))
    if not deals:
        raise ValueError(f"{p}: no deal (a deal file has one JSON object a line, e.g. "
                         '{"seed": 7})')
    return deals


def _deal_of(obj: Any, where: str, index: int, game: Game | None) -> Deal:
    """A :class:`Deal` from one line's object (or a :class:`Deal`), checked."""
    if isinstance(obj, Deal):
        obj = obj.to_json(index)
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a deal is a JSON object like {{\"seed\": 7}}, got {obj!r}")
    unknown = [k for k in obj if k not in DEAL_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; a deal has "
                         f"{', '.join(DEAL_KEYS)}")
    if "deal" in obj and (not isinstance(obj["deal"], int) or isinstance(obj["deal"], bool)
                          or obj["deal"] != index):
        raise ValueError(f"{where}: deal must be {index} (the deals are numbered from 0 in "
                         f"file order), got {obj['deal']!r}")
    seed = obj.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"{where}: seed must be an integer in 0 .. 2**64 - 1, got {seed!r}")
    deck = obj.get("deck")
    if deck is not None:
        if not isinstance(deck, list) or not all(isinstance(t, str) for t in deck):
            raise ValueError(f"{where}: deck must be a list of names (the draw order), got "
                             f"{deck!r}")
        if game is not None:
            try:
                _parse_deck(game, deck)
            except ValueError as e:
                raise ValueError(f"{where}: deck: {e}") from None
        deck = tuple(deck)
    return Deal(seed, deck)


def deals_text(deals: Sequence[Deal]) -> str:
    """A deal file's text: one :meth:`Deal.to_json` line per deal."""
    return "".join(json.dumps(d.to_json(i)) + "\n" for i, d in enumerate(deals))


def seed_deals(game: Game, seed: int, count: int) -> list[Deal]:
    """The first ``count`` deals of a tournament of seed ``seed`` (:func:`deal_seed`), each
    with the draw order its seed shuffles when the game has a deck (``game.deck_names``)."""
    names = getattr(game, "deck_names", None)
    out = []
    for d in range(count):
        s = deal_seed(seed, d)
        out.append(Deal(s, None if names is None else tuple(names(s))))
    return out
