"""The sweep covers every kill point, and each outcome is the one the theory predicts."""

from __future__ import annotations

import pytest

import labkit as lk
from labkit.bench.trace import read_trace

# The theory, point by point. A crash before any write, or after the last one, is harmless.
# Between the two commits, effect-first repeats the effect and checkpoint-first loses it;
# one transaction has no "between"; a receiver that dedupes turns the repeat into a no-op.
PREDICTED = {
    ("effect_first", "start"): "consistent",
    ("effect_first", "effect"): "duplicate",
    ("effect_first", "checkpoint"): "consistent",
    ("checkpoint_first", "start"): "consistent",
    ("checkpoint_first", "checkpoint"): "lost",
    ("checkpoint_first", "effect"): "consistent",
    ("atomic", "start"): "consistent",
    ("atomic", "in_transaction"): "consistent",
    ("atomic", "committed"): "consistent",
    ("idempotent", "start"): "consistent",
    ("idempotent", "effect"): "consistent",
    ("idempotent", "checkpoint"): "consistent",
}


def test_sweep_matches_theory_in_both_modes(tmp_path, no_leftover_workers):
    seen = []
    results = lk.sweep(
        lk.KILL_MODES,
        out=tmp_path / "sweep",
        progress=lambda done, total, _: seen.append((done, total)),
    )
    every_point = {(o.name, p) for o in lk.ORDERS.values() for p in o.kill_points}
    assert set(PREDICTED) == every_point
    assert len(results) == 2 * len(every_point)
    for result in results:
        key = (result.spec.order, result.spec.kill_at)
        assert result.outcome == PREDICTED[key], result.summary()
        assert result.first.killed_at == result.spec.kill_at
    assert seen[-1] == (len(results), len(results))
    assert sorted(done for done, _ in seen) == list(range(1, len(results) + 1))


def test_a_clean_run_passes_exactly_the_declared_kill_points(tmp_path):
    for order in lk.ORDERS.values():
        result = lk.run(order.name, out=tmp_path / order.name)
        passed = [
            e["point"]
            for e in read_trace(result.run_dir)
            if e["event"] == "point" and e["role"] == "first"
        ]
        assert tuple(passed) == order.kill_points
        assert result.outcome == "consistent"


def test_an_interrupted_sweep_kills_its_own_workers_and_not_a_paused_step(tmp_path):
    """An instructor's page: a step panel holds a worker paused, a sweep panel is stopped."""
    from labkit.studies.commit_window.stepping import StepSession

    def stop_after_two(done, _total, _result):
        if done == 2:
            raise KeyboardInterrupt

    with StepSession("effect_first", out=tmp_path / "step") as step:
        paused = step.worker.proc.pid
        with pytest.raises(KeyboardInterrupt):
            lk.sweep(out=tmp_path / "sweep", progress=stop_after_two)
        assert step.worker.proc.poll() is None and step.worker.proc.pid == paused
        while not step.finished:
            step.proceed()
        result = step.recover()
    assert result.outcome == "consistent" and result.first.exit_code == 0
