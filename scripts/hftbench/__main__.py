"""`python -m hftbench …`: the CLI without the console script (the hosted CI jobs use it)."""

import sys

from .cli import main

sys.exit(main())
