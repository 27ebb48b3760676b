"""What the built-in games' states share: a position held in NumPy arrays, with undo.

:class:`ArrayState` is the base of :class:`~taluva_ai.games.taluva.game.TaluvaState` and
:class:`~taluva_ai.games.thurn_und_taxis.game.ThurnUndTaxisState`: the facts every game reads
from its ``meta`` row (whose turn it is, whether the game is over), the legal mask, and the
history of snapshots behind :meth:`undo` and :meth:`history`. A game sets the four class
attributes that locate those facts in its ``meta`` row and implements :meth:`arrays` and
:meth:`_set_arrays`; the rules stay in its compiled kernels (the protocol of
:mod:`taluva_ai.protocol`, OpenSpiel's ``State``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, overload

import numpy as np

from taluva_ai.protocol import CHANCE, TERMINAL

#: A snapshot of the undo history: copies of the state arrays before an action, and the action.
Snapshot = tuple[tuple[np.ndarray, ...], int]


_T = TypeVar("_T")


class MetaField(Generic[_T]):
    """A read-only fact of an :class:`ArrayState` held in one field of its ``meta`` row: as a
    class attribute, ``state.name`` is ``convert(int(state.meta[index]))`` (a property
    declared in one line; ``doc`` is its docstring)."""

    def __init__(self, index: int, convert: Callable[[int], _T], doc: str) -> None:
        self.index = index
        self.convert = convert
        self.__doc__ = doc

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> MetaField[_T]: ...
    @overload
    def __get__(self, obj: ArrayState, owner: type | None = None) -> _T: ...
    def __get__(self, obj: ArrayState | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return self.convert(int(obj.meta[self.index]))


class ArrayState:
    """A game position held in NumPy arrays, with an undo history of snapshots.

    Subclasses set :attr:`M_STEP`, :attr:`M_PLAYER` and :attr:`M_PLY` (fields of ``meta``),
    :attr:`S_CHANCE`
    and :attr:`S_TERMINAL` (values of ``meta[M_STEP]``), and implement :meth:`arrays` and
    :meth:`_set_arrays`.
    """

    M_STEP: ClassVar[int]
    M_PLAYER: ClassVar[int]
    M_PLY: ClassVar[int]
    S_CHANCE: ClassVar[int]
    S_TERMINAL: ClassVar[int]

    game: Any
    meta: np.ndarray
    #: Keep snapshots for :meth:`undo`; search sets it False on its throw-away copies.
    record_history: bool
    _history: list[Snapshot]

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The live state arrays (not copies), in the order of the game's kernels."""
        raise NotImplementedError

    def _set_arrays(self, arrays: tuple[np.ndarray, ...]) -> None:
        """Make ``arrays`` (in :meth:`arrays`'s order) the live state."""
        raise NotImplementedError

    def _copy_arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(x.copy() for x in self.arrays())

    def _record(self, arrays: tuple[np.ndarray, ...], action: int) -> None:
        """Push the snapshot ``(arrays, action)`` when this state records history."""
        if self.record_history:
            self._history.append((arrays, action))

    @property
    def num_players(self) -> int:
        return int(self.game.num_players)

    @property
    def current_player(self) -> int:
        """Seat to move; ``CHANCE`` (-1) at a chance node; ``TERMINAL`` (-4) once over."""
        s = self.meta[self.M_STEP]
        if s == self.S_CHANCE:
            return CHANCE
        if s == self.S_TERMINAL:
            return TERMINAL
        return int(self.meta[self.M_PLAYER])

    @property
    def ply(self) -> int:
        """Number of actions applied, chance outcomes included."""
        return int(self.meta[self.M_PLY])

    def _seat(self, player: Any) -> int:
        """``player`` as a seat index.

        Raises:
            ValueError: not a seat ``0 .. num_players - 1`` (bools refused).
        """
        if not isinstance(player, (int, np.integer)) or isinstance(player, bool) or not (
            0 <= player < self.num_players
        ):
            raise ValueError(f"player must be a seat 0..{self.num_players - 1}, got {player!r}")
        return int(player)

    def is_terminal(self) -> bool:
        return bool(self.meta[self.M_STEP] == self.S_TERMINAL)

    def legal_actions(self) -> np.ndarray:
        raise NotImplementedError

    def legal_action_mask(self) -> np.ndarray:
        """``bool[num_actions]``: True at the legal ids."""
        mask = np.zeros(self.game.num_actions, dtype=np.bool_)
        mask[self.legal_actions()] = True
        return mask

    def undo(self) -> None:
        """Take back the last action (chance outcomes included).

        Raises:
            IndexError: nothing to undo.
        """
        if not self._history:
            raise IndexError("nothing to undo" if self.record_history else
                             "nothing to undo: this copy does not record history")
        arrays, _ = self._history.pop()
        # copies: clones share history entries, and the kernels write into the live arrays
        self._set_arrays(tuple(x.copy() for x in arrays))

    def history(self) -> list[int]:
        """Applied actions in order (chance outcomes included)."""
        return [a for _, a in self._history]
