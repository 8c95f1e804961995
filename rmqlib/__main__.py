"""``python -m rmqlib`` runs the command line."""

import sys

from rmqlib.cli import main

sys.exit(main())
