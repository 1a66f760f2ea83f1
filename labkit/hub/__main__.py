"""python -m labkit.hub: what `python3 tasks.py hub` runs in the lab's .venv."""

import sys

from labkit.hub.start import main

if __name__ == "__main__":  # imported (every labkit module is, in a test), it does nothing
    main(sys.argv[1:])
