"""The SPRT of a 2-agent tournament, watched while the games are played.

:class:`_SprtWatch` counts the deals in order as both their games finish, updates the
candidate's pentanomial counts, wins, draws and losses and the LLR, gives the live line of the
progress bar, and names the deal at which the test was decided (the runner then stops). The
test itself is :mod:`taluva_ai.sprt`'s.
"""

from __future__ import annotations

from typing import Any

from taluva_ai.tournament.schedules import Schedule


class _SprtWatch:
    """The sequential test over the deals of a 2-agent tournament, in deal order: after each
    deal whose both games are finished, the candidate's pentanomial counts, its wins, draws
    and losses and the LLR are updated; ``decided_deal`` is the first deal at which the LLR
    left its bounds."""

    def __init__(self, sprt: Any, tasks: Schedule, candidate: str) -> None:
        self.sprt = sprt
        self.candidate = candidate
        self.tasks = tasks
        self.next = 0
        self.counts = [0] * 5
        self.wdl = [0, 0, 0]  # the candidate's wins, draws, losses in the counted pairs
        self.llr = 0.0
        self.decided_deal: int | None = None

    def update(self, done: dict[str, dict[str, Any]]) -> bool:
        """Advance over the finished deals; True once the test is decided."""
        from taluva_ai.ratings import pair_points

        while (self.decided_deal is None and self.next < self.tasks.deals
               and all(t.game_id in done for t in self.tasks.deal_tasks(self.next))):
            entries = [done[t.game_id] for t in self.tasks.deal_tasks(self.next)]
            if all(e["winners"] and min(e["places"]) >= 0 for e in entries):
                points = [pair_points(e["places"], e["seats"].index(self.candidate))
                          for e in entries]
                for p in points:
                    self.wdl[0 if p == 1.0 else 1 if p == 0.5 else 2] += 1
                self.counts[round(2 * sum(points))] += 1
                self.llr = self.sprt.llr(self.counts)
                if self.sprt.decision(self.llr) is not None:
                    self.decided_deal = self.next
            self.next += 1
        return self.decided_deal is not None

    def status(self) -> str:
        """The live SPRT line: ``SPRT LLR 1.23 [-2.94, 2.94] 46 games W-D-L 20-3-23`` (the
        candidate's results in the counted pairs), ending in ``H1``/``H0`` once decided."""
        s = self.sprt
        w, d, l_ = self.wdl
        line = (f"SPRT LLR {self.llr:.2f} [{s.lower_bound:.2f}, {s.upper_bound:.2f}] "
                f"{w + d + l_} games W-D-L {w}-{d}-{l_}")
        decision = s.decision(self.llr) if self.decided_deal is not None else None
        return line if decision is None else f"{line} {decision}"
