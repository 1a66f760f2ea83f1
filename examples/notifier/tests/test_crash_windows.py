"""Every crash of the notifier, recovered, sends each notice exactly once: labkit's crash
explorer kills a worker after each commit and checkpoint write, recovers, and compares what
the files hold with a run that never crashed."""

import pytest


def test_a_crash_anywhere_sends_the_notice_once(crash_explorer):
    found = crash_explorer("notifier.graph:graph")
    assert found.green, found.matrix()


@pytest.mark.crash_explore("notifier.graph:graph", restart_at="now")
def test_the_same_as_a_marker():
    """The common case in one line: the test fails with every failing crash point."""
