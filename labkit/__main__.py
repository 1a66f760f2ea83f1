"""`python -m labkit ...` is the same as the `labkit` command.

`python -m` puts the current folder first on the import path; labkit's own modules are found
through its package already, so the folder is taken off again before anything else is
imported: a `json.py` beside the reader's notebook is never read by labkit's command line.
"""

import os
import sys

if sys.path and os.path.abspath(sys.path[0]) == os.getcwd():
    del sys.path[0]

from labkit.cli import main  # noqa: E402 - after the current folder left the import path

sys.exit(main())
