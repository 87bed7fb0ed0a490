"""``python -m tests.golden [--update] [--dry-run] [CASE ...]``: run the golden PTX cases
(``tests/golden/cases/``); ``--update`` regenerates the filtered prefixes' directives and
prints the diff for review (``filecheck.py`` says how a case is written)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import filecheck  # noqa: E402

sys.exit(filecheck.main(sys.argv[1:]))
