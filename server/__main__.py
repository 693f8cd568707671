"""`python -m server` runs the `arbitro` command line."""
import sys

from .cli import main

sys.exit(main())
