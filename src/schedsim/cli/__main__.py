"""``python -m schedsim.cli``: the ``schedsim`` command."""

import sys

from schedsim.cli import main

sys.exit(main())
