"""The workshop's checked exercises, two per lesson. Each check runs the reader's answer
through the real lab (see `labkit.checks` for how a check behaves).

    from labkit.exercises import lesson2
    lesson2.safe_step.check(my_step)   # .hint(), .solution()
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from labkit.checks import Exercise, Verdict, compare, source_of

__all__ = ["lesson1", "lesson2", "lesson3", "lesson4"]


# --- lesson 1: the commit window -----------------------------------------------------------


def judge_five_cases(predicted: dict) -> Verdict:
    from labkit.orders import STUDY_000_CASES
    from labkit.runs import run

    actual = {}
    for order, point in STUDY_000_CASES:
        r = run(order, point)
        story = f"{r.before.done}/{r.before.receipts} → {r.after.done}/{r.after.receipts}"
        actual[f"{order}/{point}"] = (r.outcome, f"done/receipts {story}", str(r.run_dir))
    return compare(predicted, actual)


def judge_window(points: set) -> Verdict:
    from labkit.orders import get_order
    from labkit.runs import run

    results = [run("checkpoint_first", p) for p in get_order("checkpoint_first").kill_points]
    losing = {r.spec.kill_at for r in results if r.outcome == "lost"}
    if set(points) == losing:
        return Verdict(
            "correct",
            f"only a kill at {', '.join(sorted(losing))} loses the receipt",
            str(results[0].run_dir.parent),
        )
    stories = "; ".join(f"{r.spec.kill_at} → {r.outcome}" for r in results)
    return Verdict("incorrect", f"you said {sorted(points)}; the real runs: {stories}")


lesson1 = SimpleNamespace(
    predict_five_cases=Exercise(
        "lesson1.predict_five_cases",
        "01_predict_five_cases.py",
        starter="""predictions = {
    "effect_first/effect": "???",
    "checkpoint_first/checkpoint": "???",
    "atomic/in_transaction": "???",
    "atomic/committed": "???",
    "idempotent/effect": "???",
}""",
        judge=judge_five_cases,
        hints=[
            "Each value is one of: consistent, duplicate, lost.",
            "Ask what recovery reads (done) and what it cannot see (the other file).",
        ],
    ),
    find_the_window=Exercise(
        "lesson1.find_the_window",
        "01_find_the_window.py",
        starter='window = {"???"}',
        judge=judge_window,
        hints=[
            "The kill points of checkpoint_first are start, checkpoint and effect.",
            "Which point lies after one commit and before the other?",
        ],
    ),
)


# --- lesson 2: closing the window -----------------------------------------------------------


def judge_step(answer: Callable | str) -> Verdict:
    """Sweep a reader's step: a real crash at every kill point its commits make, then recovery."""
    from labkit.runs import execute
    from labkit.spec import RunSpec
    from labkit.trace import read_trace

    source, name = source_of(answer)
    clean = execute(RunSpec("idempotent", step_source=source, step_name=name))
    if clean.outcome != "consistent":
        return Verdict(
            "incorrect",
            f"even without a crash the step leaves done={clean.after.done} "
            f"and {clean.after.receipts} receipts: it must save one "
            "receipt and done=1",
            str(clean.run_dir),
        )
    points = [
        e["point"]
        for e in read_trace(clean.run_dir)
        if e["event"] == "point" and e["role"] == "first"
    ]
    for point in points:
        r = execute(RunSpec("idempotent", point, step_source=source, step_name=name))
        if r.outcome == "recovery_failed":
            why = (r.recovery.stderr.strip().splitlines() or ["?"])[-1]
            return Verdict(
                "incorrect",
                f"killed at `{point}`, the recovery worker failed ({why}):"
                " a retry must get the receipt back, not an error",
                str(r.run_dir),
            )
        if r.outcome != "consistent":
            return Verdict(
                "incorrect",
                f"killed at `{point}`, recovery left done="
                f"{r.after.done} and {r.after.receipts} receipts: "
                f"{r.outcome}; your step is not safe to replay",
                str(r.run_dir),
            )
    return Verdict(
        "correct",
        f"consistent at every one of {len(points)} kill points: {', '.join(points)}",
        str(clean.run_dir.parent),
    )


SAFE_STEP_STARTER = """def my_step(control, effect, gate):
    with effect:
        effect.add_receipt(KEY, PAYLOAD)
    with control:
        control.mark_done()"""

BUGGY_STEP_STARTER = """def buggy_step(control, effect, gate):
    import uuid

    key = f"job-17:save-report:{uuid.uuid4()}"
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()"""

lesson2 = SimpleNamespace(
    safe_step=Exercise(
        "lesson2.safe_step",
        "02_safe_step.py",
        starter=SAFE_STEP_STARTER,
        judge=judge_step,
        code=True,
        hints=[
            "The two files cannot share a transaction: the receiver has to recognise a retry.",
            "effect.add_receipt_once(key, payload) returns the original receipt for a known key.",
        ],
    ),
    bug_hunt=Exercise(
        "lesson2.bug_hunt",
        "02_bug_hunt.py",
        starter=BUGGY_STEP_STARTER,
        judge=judge_step,
        code=True,
        hints=[
            "Print the key on two attempts: is it the same operation both times?",
            "The key must exist before the first attempt and be reused by every retry.",
        ],
    ),
)


# --- lesson 3: interrupt and resume -----------------------------------------------------------


def judge_operation_key(answer: Callable | str) -> Verdict:
    from labkit.interrupts import run_interrupt

    source, name = source_of(answer)
    namespace: dict = {}
    exec(source, namespace)
    key = namespace[name]
    one = {"operation_id": "request-42/create-ticket/v1", "title": "Printer offline"}
    other = {"operation_id": "request-43/create-ticket/v1", "title": "Printer offline"}
    if key(dict(one)) != key(dict(one)):
        return Verdict(
            "incorrect",
            "the same request got two different keys: every resume would create a new ticket",
        )
    if key(one) == key(other):
        return Verdict(
            "incorrect",
            "two different requests (same title) got the same key: "
            "the second would be merged into the first",
        )
    renamed = source.replace(f"def {name}(", "def operation_key(", 1)
    r = run_interrupt("custom", "combined", True, "after_create", key_source=renamed)
    if r["after_resume"] != 1:
        return Verdict(
            "incorrect",
            f"killed after the ticket was created, then resumed in a new "
            f"process: {r['after_resume']} tickets",
            r["run_dir"],
        )
    return Verdict(
        "correct",
        f"one ticket after a SIGKILL and a resume in a new process (receipts {r['receipts']})",
        r["run_dir"],
    )


def judge_interrupt_kills(predicted: dict) -> Verdict:
    from labkit.interrupts import run_interrupt

    actual = {}
    for point in ("before_create", "after_create", "paused"):
        r = run_interrupt("fresh", "combined", True, point)
        actual[point] = (r["after_resume"], f"receipts {r['receipts']}", r["run_dir"])
    return compare(predicted, actual)


lesson3 = SimpleNamespace(
    operation_key=Exercise(
        "lesson3.operation_key",
        "03_operation_key.py",
        starter="""def operation_key(state):
    import uuid

    return str(uuid.uuid4())""",
        judge=judge_operation_key,
        code=True,
        hints=[
            "The key must be the same on every run of the node for one request.",
            "What in the state was fixed before the first attempt, per request?",
        ],
    ),
    predict_kills=Exercise(
        "lesson3.predict_kills",
        "03_predict_kills.py",
        starter="""tickets_after = {
    "before_create": "???",
    "after_create": "???",
    "paused": "???",
}""",
        judge=judge_interrupt_kills,
        hints=[
            "Count the runs of the node: the killed process, the re-run up to the "
            "interrupt, the resume.",
            "With a fresh key, every run is a new ticket.",
        ],
    ),
)


# --- lesson 4: durability under SIGKILL ---------------------------------------------------------

REPEAT_COST, LOSS_COST, SLOW_MS, TRIALS = 10, 1_000, 100, 3


def judge_durability(choice: str) -> Verdict:
    from labkit.durability import DURABILITY_MODES, DurabilitySpec, run_trials

    if choice not in DURABILITY_MODES:
        return Verdict(
            "incorrect",
            f"{choice!r} is not a durability mode; choose one of: {', '.join(DURABILITY_MODES)}",
        )
    trials = run_trials([DurabilitySpec("linear", m, SLOW_MS) for m in DURABILITY_MODES], TRIALS)
    cost = dict.fromkeys(DURABILITY_MODES, 0)
    for t in trials:
        cost[t.spec.mode] += REPEAT_COST * len(t.rerun_nodes) if t.resumed else LOSS_COST
    best = min(cost.values())
    table = ", ".join(f"{m} {c:,}" for m, c in cost.items())
    if cost[choice] == best:
        return Verdict(
            "correct",
            f"{choice} cost the least in {TRIALS} real kills each: {table}",
            trials[0].run_dir,
        )
    return Verdict(
        "incorrect",
        f"in {TRIALS} real kills each, {choice} cost {cost[choice]:,}; the costs were {table}",
        trials[0].run_dir,
    )


def judge_sync_trial(predicted: dict) -> Verdict:
    from labkit.durability import DurabilitySpec, run_trials

    [t] = run_trials([DurabilitySpec("linear", "sync")], 1)
    story = f"ran again: {', '.join(t.rerun_nodes)}"
    return compare(
        predicted,
        {
            "checkpoints": (t.checkpoints, "at the kill", t.run_dir),
            "ledger_lines": (t.ledger_lines, story, t.run_dir),
        },
    )


lesson4 = SimpleNamespace(
    choose_durability=Exercise(
        "lesson4.choose_durability",
        "04_choose_durability.py",
        starter='choice = "???"',
        judge=judge_durability,
        hints=[
            f"A lost run costs {LOSS_COST:,}, each node run again {REPEAT_COST}; the "
            f"checkpointer takes {SLOW_MS} ms a write.",
            "Which mode can lose the run outright, and which waits for every checkpoint?",
        ],
    ),
    predict_sync_trial=Exercise(
        "lesson4.predict_sync_trial",
        "04_predict_sync_trial.py",
        starter='sync_trial = {"checkpoints": "???", "ledger_lines": "???"}',
        judge=judge_sync_trial,
        hints=[
            "Count one checkpoint for the input and one per finished super-step before c.",
            "A clean run writes 8 lines; what does recovery add?",
        ],
    ),
)
