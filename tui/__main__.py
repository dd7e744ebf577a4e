"""``python -m tui`` runs the ``opencli-tui`` command."""

import sys

from .cli import main

sys.exit(main())
