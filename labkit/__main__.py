"""`python -m labkit ...` is the same as the `labkit` command.

`python -m` puts the current folder first on the import path; labkit's own modules are found
through its package already, so the folder is taken off again before anything else is
imported: a `json.py` beside the reader's notebook is never read by labkit's command line.
A Ctrl-C while `labkit.cli` is still being found ends with the same one line as one inside it;
only Python's own start-up (its first hundredth of a second) reports in its own words.
"""

import os
import sys

if sys.path and os.path.abspath(sys.path[0]) == os.getcwd():
    del sys.path[0]

try:
    from labkit.cli import main  # after the current folder left the import path
except KeyboardInterrupt:
    print("labkit: interrupted before it started; nothing ran", file=sys.stderr)
    raise SystemExit(130) from None

sys.exit(main())
