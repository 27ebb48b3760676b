"""The games of a tournament: :func:`schedule` gives them as a :class:`Schedule`.

Round robin (every group of ``k`` agents) or gauntlet (the groups that hold the candidate);
each group plays every deal once per cyclic seat rotation; game ids are
``"<group:03d>-<deal:04d>-<rotation>"``. The schedule is computed on demand, game by game, so
a run of millions of games allocates nothing for the games not yet played.
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from taluva_ai.tournament.deals import Deal, deal_seed


@dataclass(frozen=True)
class _GameTask:
    """One scheduled tournament game."""

    game_id: str
    group: tuple[int, ...]  # agent indices of the group, ascending
    deal: int
    rotation: int
    seats: tuple[str, ...]  # agent spec per seat
    seed: int
    deck: tuple[str, ...] | None = None  # the deal's explicit draw order (a deal file's)


#: Most games per group a tournament may schedule (``games``).
MAX_GAMES = 10**9


class Schedule(Sequence[_GameTask]):
    """The games of a tournament (:func:`schedule`) as a sequence computed on demand: its
    length, the task at an index or with a game id, and its iteration cost no memory, so a
    schedule of millions of games is allocated game by game as they are played."""

    def __init__(self, agent_specs: Sequence[str], groups: list[tuple[int, ...]], deals: int,
                 players_per_game: int, seed: int, deal_list: Sequence[Deal] | None = None
                 ) -> None:
        self.specs = tuple(agent_specs)
        self.groups = groups
        self.deals = deals
        self.k = players_per_game
        self.seed = seed
        self.deal_list = None if deal_list is None else list(deal_list)
        #: The game ids, as a container (``game_id in schedule.ids``).
        self.ids = _GameIds(self)

    def __len__(self) -> int:
        return len(self.groups) * self.deals * self.k

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        n = len(self)
        i = int(i) + n if i < 0 else int(i)
        if not 0 <= i < n:
            raise IndexError(f"game {i} of a schedule of {n}")
        gi, rest = divmod(i, self.deals * self.k)
        d, r = divmod(rest, self.k)
        return self.task(gi, d, r)

    def __iter__(self) -> Iterator[_GameTask]:
        for gi in range(len(self.groups)):
            for d in range(self.deals):
                s = self.deal_seed(d)
                for r in range(self.k):
                    yield self.task(gi, d, r, s)

    def deal_seed(self, deal: int) -> int:
        """The seed of deal ``deal`` (the deal file's, else :func:`deal_seed`)."""
        if self.deal_list is not None:
            return self.deal_list[deal].seed
        return deal_seed(self.seed, deal)

    def __contains__(self, task: object) -> bool:
        return isinstance(task, _GameTask) and self.position(task.game_id) is not None \
            and self[cast(int, self.position(task.game_id))] == task

    def task(self, group: int, deal: int, rotation: int, seed: int | None = None) -> _GameTask:
        """The game of group ``group`` (index), deal ``deal``, rotation ``rotation``."""
        g = self.groups[group]
        order = g[rotation:] + g[:rotation]
        deck = None if self.deal_list is None else self.deal_list[deal].deck
        return _GameTask(f"{group:03d}-{deal:04d}-{rotation}", g, deal, rotation,
                         tuple(self.specs[i] for i in order),
                         self.deal_seed(deal) if seed is None else seed, deck)

    def position(self, game_id: str) -> int | None:
        """The position of the game ``game_id`` in the schedule, None when it has none."""
        parts = game_id.split("-") if isinstance(game_id, str) else []
        if len(parts) != 3 or not all(x.isdigit() for x in parts):
            return None
        gi, d, r = (int(x) for x in parts)
        if not (gi < len(self.groups) and d < self.deals and r < self.k) or \
                game_id != f"{gi:03d}-{d:04d}-{r}":
            return None
        return (gi * self.deals + d) * self.k + r

    def up_to_deal(self, deal: int) -> list[_GameTask]:
        """The games of deals ``0 .. deal`` in every group, in game-id order."""
        return [self.task(gi, d, r) for gi in range(len(self.groups))
                for d in range(min(deal + 1, self.deals)) for r in range(self.k)]

    def deal_tasks(self, deal: int) -> list[_GameTask]:
        """The games of deal ``deal`` in every group, in game-id order."""
        s = self.deal_seed(deal)
        return [self.task(gi, deal, r, s) for gi in range(len(self.groups))
                for r in range(self.k)]


class _GameIds(Container[str]):
    """The game ids of a :class:`Schedule`, as a container."""

    def __init__(self, sched: Schedule) -> None:
        self.sched = sched

    def __contains__(self, game_id: object) -> bool:
        return isinstance(game_id, str) and self.sched.position(game_id) is not None

    def order(self, game_id: str) -> int:
        """Sort key of a game id of the schedule: its position."""
        i = self.sched.position(game_id)
        if i is None:
            raise KeyError(f"{game_id!r} is not a game of the schedule")
        return i


def schedule(
    agent_specs: Sequence[str], games: int, players_per_game: int, seed: int,
    gauntlet: str | None = None, deals: Sequence[Deal] | None = None,
) -> Schedule:
    """The tournament's games, in game-id order (a :class:`Schedule`, computed on demand).

    Round robin: every group of ``players_per_game`` agents (all pairs, triples or quadruples,
    in :func:`itertools.combinations` order) plays. Gauntlet (``gauntlet`` names one of
    ``agent_specs``, the candidate): only the groups that hold the candidate, i.e. the
    candidate with every combination of ``players_per_game - 1`` other agents. Each group plays
    ``ceil(games / k)`` deals, ``k = players_per_game``, each deal once per cyclic seat
    rotation (rotation ``r`` seats the group's agents ``r, r+1, ...``: duplicate play), so
    ``games`` is rounded up to a multiple of ``k``. Game ids are
    ``"<group:03d>-<deal:04d>-<rotation>"``. Deal ``d`` is ``deals[d]`` when ``deals`` is
    given (its seed and deck), else :func:`deal_seed` of ``seed``.

    Raises:
        ValueError: ``gauntlet`` is not one of ``agent_specs``, ``games`` outside
            ``1 .. MAX_GAMES``, or fewer ``deals`` than the ``ceil(games / k)`` the schedule
            needs.
    """
    k = players_per_game
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES:
        raise ValueError(f"games must be an integer in 1..{MAX_GAMES} (per group), got "
                         f"{games!r}")
    need = -(-games // k)
    if deals is not None and len(deals) < need:
        raise ValueError(f"deals: {len(deals)} deals for {games} games per group of {k} "
                         f"players, which need {need}")
    if gauntlet is None:
        groups = list(itertools.combinations(range(len(agent_specs)), k))
    else:
        if gauntlet not in agent_specs:
            raise ValueError(f"gauntlet agent {gauntlet!r} is not one of the agents")
        c = list(agent_specs).index(gauntlet)
        others = [i for i in range(len(agent_specs)) if i != c]
        groups = [tuple(sorted((c, *combo))) for combo in itertools.combinations(others, k - 1)]
    return Schedule(agent_specs, groups, need, k, seed, deals)
