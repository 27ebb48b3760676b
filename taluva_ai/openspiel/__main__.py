"""``python -m taluva_ai.openspiel playthrough | bench`` (:func:`.playthroughs.main`)."""

from taluva_ai.openspiel.playthroughs import main

raise SystemExit(main())
