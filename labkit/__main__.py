"""`python -m labkit ...` is the same as the `labkit` command.

`python -m` puts the current folder first on the import path; labkit's own modules are found
through its package already, so the folder is taken off again before anything else is
imported: a `json.py` beside the reader's notebook is never read by labkit's command line.
A Ctrl-C while `labkit.cli` is still being found ends with the same one line as one inside it;
only Python's own start-up (its first hundredth of a second) reports in its own words.
"""

import os
import sys


def forget_caught_interrupts() -> None:
    """CPython notes a Ctrl-C that escaped code it compiled from a string (a dataclass's
    `__init__`, a namedtuple) even when labkit caught it further up, and `python -m` then ends
    by SIGINT rather than with labkit's own status (130). Running a string clears the note."""
    exec("")


try:
    if sys.path and os.path.abspath(sys.path[0]) == os.getcwd():
        del sys.path[0]
    from labkit.cli import main  # after the current folder left the import path
except KeyboardInterrupt:  # while Python still finds labkit.cli, before its own guard begins
    print("labkit: interrupted before it started; nothing ran", file=sys.stderr)
    status = 130
else:
    status = main()
finally:  # also when labkit.cli's guard ends the start with SystemExit(130)
    forget_caught_interrupts()
sys.exit(status)
