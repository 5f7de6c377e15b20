"""``python -m dreamd`` is the ``dreamd`` command."""

import sys

from dreamd.cli import main

sys.exit(main())
