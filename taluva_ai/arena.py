"""Deprecated: use :mod:`taluva_ai.tournament`.

Matches and tournaments moved to the package :mod:`taluva_ai.tournament`, one module per
concern (playing a game, agents, deals, schedules, settings, the run directory, workers, the
runner and its resume, exports), and the run lock and SIGTERM handling to
:mod:`taluva_ai.runfiles`. This module only re-exports their public names, so that code written
against it (``from taluva_ai.arena import run_tournament``) goes on working; it warns nothing
when imported. New code imports from :mod:`taluva_ai.tournament`.
"""

from __future__ import annotations

from taluva_ai.runfiles import run_lock, sigterm_as_interrupt
from taluva_ai.tournament import *  # noqa: F403
from taluva_ai.tournament import __all__ as _tournament_all

__all__ = [*_tournament_all, "run_lock", "sigterm_as_interrupt"]
