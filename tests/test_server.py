"""The trial server's handling of Ctrl-C (the protocol itself runs in every LangGraph test)."""

from __future__ import annotations

from tests.conftest import run_python


def test_a_ctrl_c_that_came_after_its_call_answered_is_dropped_not_turned_on_the_next():
    seen = run_python(
        """
        import json, os, signal
        from labkit.bench.server import interruptible

        def late_ctrl_c():  # held back, as between two calls in the server
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            os.kill(os.getpid(), signal.SIGINT)

        late_ctrl_c()
        dropped = interruptible(lambda: "ran to its end", stale_interrupt=True)
        late_ctrl_c()
        try:
            interruptible(lambda: "ran to its end", stale_interrupt=False)
            kept = "ran to its end"
        except KeyboardInterrupt:
            kept = "interrupted"
        print(json.dumps([dropped, kept]))
        """
    )
    assert seen == ["ran to its end", "interrupted"]
