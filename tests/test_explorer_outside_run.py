"""The crash explorer runs graphs and steps as people outside the lab write them (issue 25,
items 4 and 7-16): the outside-shaped targets are in tests/outside/, one file per item.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.bench.errors import LabError
from labkit.studies.explorer.replay import explore

OUTSIDE = Path(__file__).parent / "outside"


def target(file: str, name: str) -> str:
    return f"{OUTSIDE / file}:{name}"


@pytest.mark.parametrize(
    ("name", "restart"), [("monthly", "month"), ("yearly", "year"), ("hashed", "hash")]
)
def test_a_key_that_changes_only_across_a_real_restart_fails_and_says_which(name, restart):
    """Item 4: recovered at once, a day later, in the next month and year, and in a new
    interpreter; each key fails at the restart that changes it, and the row says which."""
    found = explore(target("restart_keys.py", name), restart_at=("now", "day", restart))
    assert {p.n: (p.outcome, p.restart) for p in found.failing} == {1: ("duplicate", restart)}
    assert Path(found.point(1).run_dir).name == f"after-{restart}"
    green = explore(target("restart_keys.py", name), restart_at="now")
    assert green.green, green.failing  # a restart at once sees nothing
    with pytest.raises(LabError, match="unknown restart 'week'; choose one of: now, day"):
        explore(target("restart_keys.py", name), restart_at="day,week")
