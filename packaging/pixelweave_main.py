"""Entry point of the PyInstaller bundle (build_linux.sh): the `pixelweave` command, which
opens the editor or runs a command-line tool, as the console script does."""

import sys

from pixelweave.app.cli import main

if __name__ == "__main__":
    sys.exit(main())
