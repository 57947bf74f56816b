"""`python -m geval`."""

import sys

from geval.cli import main

sys.exit(main())
