"""One key from the terminal, without Enter: step mode on a projector answers with one press.

In a terminal, stdin goes into cbreak mode (keys arrive one at a time, unechoed; Ctrl-C still
interrupts) for exactly one read, and its mode is restored whatever happens, Ctrl-C included.
When stdin is not a terminal (a pipe, a test), a whole line is read instead.
"""

from __future__ import annotations

import os
import sys
import termios
import tty

__all__ = ["read_key"]

CTRL_D = "\x04"


def read_key(prompt: str) -> str:
    """Show `prompt`; return the key pressed ("\\n" for Enter), or the line typed if stdin is
    not a terminal. Ctrl-D or the end of the input raises EOFError, as `input` does."""
    if not sys.stdin.isatty():
        return input(prompt)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)  # this also drops keys pressed before the prompt: none counts twice
        print(prompt, end="", flush=True)
        # A key such as an arrow sends several bytes at once: one read takes them all.
        pressed = os.read(fd, 32).decode(errors="replace")[:1]
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    if pressed in ("", CTRL_D):
        print()
        raise EOFError
    print(pressed if pressed.isprintable() else "")  # the key, since cbreak does not echo it
    return pressed
