"""The names the lab gives its own files and folders where a reader's code keeps its state too
(a run folder, an exploration's folder, a service's folder): each begins with `LABS_OWN`. So a
dot-file of the reader's (a `.sent` marker) is their state, never taken for the lab's, and no
file of the lab's is taken for the reader's. Worker-side: standard library only.
"""

from __future__ import annotations

__all__ = ["LABS_OWN", "labs_own_name"]

LABS_OWN = ".labkit-"


def labs_own_name(name: str) -> bool:
    """Whether a file or folder called `name` (no path) is one the lab made for itself."""
    return name.startswith(LABS_OWN)
