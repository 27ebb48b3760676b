"""``python -m taluva_ai.cli``: the ``taluva`` command."""

import sys

from taluva_ai.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
