"""``python -m dreamd`` is the ``dreamd`` command."""

import sys

from dreamd.command import main

sys.exit(main())
