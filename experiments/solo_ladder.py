"""The solo score ladder (docs/solo.md): ``taluva_ai.solo_ladder``'s command line.

    python experiments/solo_ladder.py --out runs/solo_ladder --games 200 --concurrency 2
    python experiments/solo_ladder.py --smoke --out runs/solo_smoke
"""

from taluva_ai.solo_ladder import main

if __name__ == "__main__":
    main()
