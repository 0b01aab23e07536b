"""`python -m tcplab.cli`: the console script."""

import sys

from . import entry

sys.exit(entry())
