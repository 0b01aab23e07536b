"""`python -m tcplab.cli`: the console script."""

import sys

from . import console

sys.exit(console())
