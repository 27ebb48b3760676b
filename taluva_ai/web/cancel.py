"""Stopping a search that runs in a worker thread of the browser board (``taluva serve``,
docs/web.md, Security): a departed client or the server's shutdown interrupts it.

A :class:`CancelFlag` is a ``threading.Event`` (what the chunked analyses already look at
between their chunks: :func:`taluva_ai.web.analysis.search_position`) with one more power:
:meth:`CancelFlag.interrupt` also raises :class:`Cancelled` *inside* the worker thread while it
runs a :meth:`CancelFlag.section` (an agent's move, a search), through CPython's
``PyThreadState_SetAsyncExc``. The exception is seen at the thread's next Python instruction,
so a search written in Python (the MCTS loop with ``leaf_batch`` > 1 or a network, ISMCTS,
OpenSpiel's ``MCTSBot``, a user's agent class) stops at once; a compiled search (the Numba
MCTS) stops when its compiled call returns, which the board's bounds keep finite
(:func:`taluva_ai.web.specs.check_spec`). Outside a section nothing is raised, so the game's
state is never left half-changed: a move is applied only after its section ended whole.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Cancelled(BaseException):
    """Raised in a worker thread's :meth:`CancelFlag.section` by :meth:`CancelFlag.interrupt`.

    A ``BaseException`` (as ``KeyboardInterrupt``), so that an agent's or a search's own
    ``except Exception`` does not swallow it."""


def _checkpoint() -> None:
    """A Python call: an asynchronous exception already pending for this thread is raised
    here at the latest."""


def _raise_in(thread_id: int) -> bool:
    """Raise :class:`Cancelled` asynchronously in the thread ``thread_id`` (CPython only;
    elsewhere nothing happens and only the flag is set)."""
    try:
        set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except AttributeError:  # not CPython
        return False
    return bool(set_async(ctypes.c_ulong(thread_id), ctypes.py_object(Cancelled)))


class CancelFlag(threading.Event):
    """A cancel for one piece of work in a worker thread (module docstring).

    ``set()`` only raises the flag: the work looks at it where it can (between chunks).
    ``interrupt()`` raises it and, while the worker is inside :meth:`section`, raises
    :class:`Cancelled` there.
    """

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._thread: int | None = None
        self.interrupted = False

    @contextmanager
    def section(self) -> Iterator[None]:
        """Run the ``with`` body where :meth:`interrupt` may raise :class:`Cancelled`.

        Raises:
            Cancelled: interrupted before or during the body (at the latest on leaving it: a
                body that ended as the interrupt came counts as interrupted).
        """
        me = threading.get_ident()
        with self._guard:
            if self._thread == me:  # nested: the outer section covers it
                nested = True
            else:
                nested = False
                if self.interrupted:
                    raise Cancelled
                self._thread = me
        if nested:
            yield
            return
        try:
            yield
        finally:
            with self._guard:
                self._thread = None
            _checkpoint()

    def interrupt(self) -> None:
        """Set the flag and stop the work: :class:`Cancelled` in its thread if it runs a
        :meth:`section` now, or when it enters one."""
        with self._guard:
            self.interrupted = True
            self.set()
            if self._thread is not None:
                _raise_in(self._thread)
                self._thread = None


@contextmanager
def section(cancel: threading.Event | None) -> Iterator[None]:
    """``cancel.section()`` for a :class:`CancelFlag`; nothing for a plain ``Event`` or None
    (whose cancel is seen only where the work looks at it)."""
    if isinstance(cancel, CancelFlag):
        with cancel.section():
            yield
    else:
        yield
