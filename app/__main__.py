"""`python -m pixelweave.app`: the pixelweave command line (as is `python -m pixelweave`)."""

import sys

from pixelweave.app.cli import main

sys.exit(main())
