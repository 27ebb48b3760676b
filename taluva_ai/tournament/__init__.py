"""Matches and tournaments between agents, for any game of :mod:`taluva_ai.protocol` (moving
here from :mod:`taluva_ai.arena`, one module per concern)."""
