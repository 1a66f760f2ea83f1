"""The workshop's checked exercises, lesson by lesson. Each check runs the reader's answer
through the real lab (see `labkit.checks` for how a check behaves, `labkit.judges` for the
exercises whose answer is code).

    from labkit.exercises import lesson2
    lesson2.safe_step.check(my_step)   # .hint(), .solution()
"""

from __future__ import annotations

from types import SimpleNamespace

from labkit.checks import Exercise, Verdict, each, is_open, judge_predictions, normal
from labkit.judges import files_held, judge_operation_key, judge_step

__all__ = ["lesson1", "lesson2", "lesson3", "lesson4"]


# --- lesson 1: the commit window -----------------------------------------------------------


def judge_window(points: object) -> Verdict:
    """Every kill point of checkpoint_first, for real: the answer must name exactly the ones
    that lose the receipt (a placeholder left beside an answer is forgiven)."""
    from labkit.orders import get_order
    from labkit.runs import run

    order = get_order("checkpoint_first")
    if isinstance(points, str):
        points = {points}
    if not isinstance(points, set | list | tuple):
        return Verdict("incorrect", 'give a set of kill points, such as {"start"}')
    named = {normal(p) for p in points if not is_open(p)}
    unknown = sorted(named - set(order.kill_points), key=str)
    if unknown:
        return Verdict(
            "incorrect",
            f"not a kill point of checkpoint_first: {unknown}; "
            f"its points: {', '.join(order.kill_points)}",
        )
    runs = {point: run(order.name, point) for point in order.kill_points}
    losing = {point for point, r in runs.items() if (r.after.done, r.after.receipts) == (1, 0)}
    if named == losing:
        where = sorted(losing) or ["none"]
        folder = str(runs[where[0]].run_dir) if losing else None
        return Verdict("correct", f"the receipt is lost by a kill at: {', '.join(where)}", folder)
    lines = [
        f"killed at {p}, recovery left {files_held(runs[p].after)}: not lost "
        f"(look in {runs[p].run_dir})"
        for p in order.kill_points
        if p in named - losing
    ]
    missing = len(losing - named)
    if missing:
        points = "point where a crash loses" if missing == 1 else "points where a crash loses"
        lines.append(f"{missing} kill {points} the receipt: not in your set")
    wrong_dirs = [str(runs[p].run_dir) for p in order.kill_points if p in named - losing]
    return Verdict("incorrect", "\n".join(lines), wrong_dirs[0] if wrong_dirs else None)


lesson1 = SimpleNamespace(
    find_the_window=Exercise(
        "lesson1.find_the_window",
        "01_find_the_window.py",
        starter='window = {"???"}',
        judge=judge_window,
        hints=[
            "checkpoint_first passes `start`, commits done=1 (then passes `checkpoint`), "
            "commits the receipt (then passes `effect`).",
            "For each point, write down done and receipts as a kill there leaves them; "
            "recovery runs the step only if done=0.",
            "Lost means done=1 and no receipt: recovery skips a step whose effect never "
            "happened. Which point lies after one commit and before the other?",
        ],
    ),
)


# --- lesson 2: closing the window -----------------------------------------------------------


def study_000_case(case: str) -> tuple[object, str, str]:
    """One case of study 000 ("order/point"): a real crash and recovery, and its outcome."""
    from labkit.runs import run

    r = run(*case.split("/"))
    story = f"done/receipts {r.before.done}/{r.before.receipts} → {r.after.done}/{r.after.receipts}"
    return r.outcome, story, str(r.run_dir)


def judge_five_cases(predicted: object) -> Verdict:
    from labkit.orders import STUDY_000_CASES

    cases = [f"{order}/{point}" for order, point in STUDY_000_CASES]
    return judge_predictions(predicted, cases, each(study_000_case))


BUGGY_STEP_STARTER = """def buggy_step(control, effect, gate):
    import uuid

    key = f"job-17:save-report:{uuid.uuid4()}"
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()"""

lesson2 = SimpleNamespace(
    predict_five_cases=Exercise(
        "lesson2.predict_five_cases",
        "02_predict_five_cases.py",
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
            "For each case, write down what the kill leaves on disk: a write counts only once "
            "its transaction has committed.",
            "Then let recovery act: it reads done only, and with done=0 runs the whole step "
            "again; only the idempotent receiver recognises the retry.",
        ],
    ),
    safe_step=Exercise(
        "lesson2.safe_step",
        "02_safe_step.py",
        starter="""def my_step(control, effect, gate):
    with effect:
        effect.add_receipt(KEY, PAYLOAD)
    with control:
        control.mark_done()""",
        judge=judge_step,
        code=True,
        hints=[
            "The check kills your step after every commit that reaches a file, with or without "
            "`with` blocks. Reordering cannot help: a kill after the first commit always "
            "leaves the other file behind.",
            "The two files cannot share a transaction, so the receiver has to recognise a "
            "retry: a second attempt must not add a second receipt.",
            "effect.add_receipt_once(KEY, PAYLOAD) returns the original receipt for a key it "
            "knows; commit it before done=1.",
        ],
    ),
    bug_hunt=Exercise(
        "lesson2.bug_hunt",
        "02_bug_hunt.py",
        starter=BUGGY_STEP_STARTER,
        judge=judge_step,
        code=True,
        hints=[
            "Killed between its two commits, the step runs again in a new process. Print the "
            "key on two attempts: is it the same operation both times?",
            "add_receipt_once recognises a retry by its key alone; a key made inside the step "
            "is new on every attempt.",
            "The key must exist before the first attempt and be reused by every retry: the "
            "worker gives you KEY.",
        ],
    ),
)


# --- lesson 3: interrupt and resume -----------------------------------------------------------


def interrupt_case(point: str) -> tuple[object, str, str]:
    """Tickets after a SIGKILL at `point` and a resume (fresh key, combined layout)."""
    from labkit.interrupts import run_interrupt

    r = run_interrupt("fresh", "combined", True, point)
    return r["after_resume"], f"receipts {r['receipts']}", r["run_dir"]


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
            "The check computes your key twice for one request, also after a real restart (a "
            "new interpreter: another pid, parent pid, hash seed and clock), and once for "
            "another request.",
            "So nothing from the process or the moment may go into it: no uuid4 or uuid1, no "
            "time, random, id(), hash() of a string, os.getpid() or os.getppid().",
            "What in the state was fixed per request before the first attempt, and differs "
            "between two requests with the same title?",
        ],
    ),
    predict_kills=Exercise(
        "lesson3.predict_kills",
        "03_predict_kills.py",
        starter="""tickets_after = {
    "before_create": None,
    "after_create": None,
    "paused": None,
}""",
        judge=lambda predicted: judge_predictions(
            predicted, ("before_create", "after_create", "paused"), each(interrupt_case)
        ),
        hints=[
            "Count the runs of the node that reach the ticket service: the killed process, a "
            "re-run up to the interrupt (if no interrupt was saved), the resume.",
            "With a fresh key every run that reaches the ticket service makes a new ticket; "
            "a process killed at before_create never reached it.",
            "At `paused` the interrupt was saved before the kill: only the resume runs the "
            "node again.",
        ],
    ),
)


# --- lesson 4: durability under SIGKILL ---------------------------------------------------------

REPEAT_COST, LOSS_COST, SLOW_MS, TRIALS = 10, 1_000, 100, 3


def judge_durability(choice: object) -> Verdict:
    """Every mode, TRIALS real kills each on the slow checkpointer: the choice must cost least."""
    from labkit.durability import DURABILITY_MODES, DurabilitySpec, run_trials

    modes = ", ".join(DURABILITY_MODES)
    if not isinstance(choice, str) or normal(choice) not in DURABILITY_MODES:
        return Verdict("incorrect", f"{choice!r} is not a durability mode; choose one of: {modes}")
    choice = normal(choice)
    trials = run_trials([DurabilitySpec("linear", m, SLOW_MS) for m in DURABILITY_MODES], TRIALS)
    cost = dict.fromkeys(DURABILITY_MODES, 0)
    for t in trials:
        cost[t.spec.mode] += REPEAT_COST * len(t.rerun_nodes) if t.resumed else LOSS_COST
    mine = [t for t in trials if t.spec.mode == choice]
    if cost[choice] == min(cost.values()):
        table = ", ".join(f"{m} {c:,}" for m, c in cost.items())
        return Verdict(
            "correct",
            f"{choice} cost the least in {TRIALS} real kills each: {table}",
            mine[0].run_dir,
        )
    lost = sum(not t.resumed for t in mine)
    repeated = sum(len(t.rerun_nodes) for t in mine if t.resumed)
    worst = max(mine, key=lambda t: LOSS_COST if not t.resumed else len(t.rerun_nodes))
    return Verdict(
        "incorrect",
        f"in {TRIALS} real kills, {choice} cost {cost[choice]:,}: {lost} runs lost "
        f"({LOSS_COST:,} each) and {repeated} node runs repeated ({REPEAT_COST} each); "
        "another mode cost less",
        worst.run_dir,
    )


def sync_trial(keys: list[str]) -> dict[str, tuple[object, str, str]]:
    """One real kill inside c, linear graph, sync: checkpoints at the kill, lines after."""
    from labkit.durability import DurabilitySpec, run_trials

    [t] = run_trials([DurabilitySpec("linear", "sync")], 1)
    actual = {
        "checkpoints": (t.checkpoints, "at the kill", t.run_dir),
        "ledger_lines": (t.ledger_lines, f"ran again: {', '.join(t.rerun_nodes)}", t.run_dir),
    }
    return {k: actual[k] for k in keys}


lesson4 = SimpleNamespace(
    choose_durability=Exercise(
        "lesson4.choose_durability",
        "04_choose_durability.py",
        starter='choice = "???"',
        judge=judge_durability,
        hints=[
            f"A lost run costs {LOSS_COST:,}, each node run again {REPEAT_COST}; the "
            f"checkpointer takes {SLOW_MS} ms a write.",
            "exit saves only when the graph exits, which a SIGKILL skips: what is left for "
            "recovery to resume from?",
            "async lets the nodes run ahead of the slow writes; sync waits for each one. Which "
            "mode still holds a checkpoint when the kill lands?",
        ],
    ),
    predict_sync_trial=Exercise(
        "lesson4.predict_sync_trial",
        "04_predict_sync_trial.py",
        starter='sync_trial = {"checkpoints": None, "ledger_lines": None}',
        judge=lambda predicted: judge_predictions(
            predicted, ("checkpoints", "ledger_lines"), sync_trial
        ),
        hints=[
            "Count one checkpoint for the input and one per finished super-step before c.",
            "The super-steps before c are __start__, a and b.",
            "A clean run writes 8 ledger lines (the start and end of a, b, c, d); recovery "
            "resumes at c.",
        ],
    ),
)
