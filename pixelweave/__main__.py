"""`python -m pixelweave ...` is the `pixelweave` command."""

import sys

from pixelweave.app.cli import main

sys.exit(main())
