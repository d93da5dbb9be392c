"""`python -m app`: the pixelweave command line."""

import sys

from app.cli import main

sys.exit(main())
