"""``python -m certify``: the ``certify`` command line."""

from __future__ import annotations

import sys

from certify.cli import main

if __name__ == "__main__":
    sys.exit(main())
