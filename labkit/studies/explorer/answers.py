"""How a graph's stops are answered, in the run and in a recovery: every `interrupt()` with
the reader's `resume` value (True when they gave none), what their `resume_by` function says
of its payload, or the next of their `resumes`, answers given in order.

Answers in order must survive a kill: the recovery meets the same interrupt again (by its id,
which the thread's saved checkpoint fixes) or the next one. So each answer's number is noted
in the run's trace before it is given, and a recovery reads the notes of the process it
replaces: an interrupt noted keeps its number, one not noted gets the number after the last.
A static breakpoint (`interrupt_before`) is no interrupt: it is gone on past with None.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.types import Command, Interrupt

from labkit.bench.trace import Trace, read_trace
from labkit.studies.explorer.target import BadTarget, load_function

__all__ = ["Answers", "answers", "resume_of"]

ANSWERED = "answered"  # the trace's event: an interrupt's id and the number of its answer


class Answers:
    """One value for every interrupt, or a function of each one's payload."""

    def __init__(self, answer: Callable[[object], object]) -> None:
        self.answer = answer

    def __call__(self, interrupt: Interrupt) -> object:
        return self.answer(interrupt.value)


class InOrder(Answers):
    """The n-th interrupt the thread meets gets the n-th answer, across a kill."""

    def __init__(self, given: list, trace: Trace, run_dir: str) -> None:
        self.given, self.trace = given, trace
        self.numbers = {
            event["interrupt"]: event["n"]
            for event in read_trace(run_dir)
            if event["event"] == ANSWERED
        }

    def __call__(self, interrupt: Interrupt) -> object:
        n = self.numbers.get(interrupt.id, max(self.numbers.values(), default=-1) + 1)
        if n >= len(self.given):
            fields = {"n": n + 1, "value": repr(interrupt.value), "given": len(self.given)}
            raise BadTarget(
                f"the graph asked for answer {n + 1} ({interrupt.value!r}); "
                f"resumes gives {len(self.given)}: give one per interrupt, in order",
                "explore_resumes_short",
                **fields,
            )
        self.numbers[interrupt.id] = n
        self.trace.note(ANSWERED, interrupt=interrupt.id, n=n)  # before the answer is given
        return self.given[n]


def answers(job: dict, trace: Trace) -> Answers:
    """The reader's way to answer: `resumes` in order, their `resume_by` function, or else
    their `resume` value whatever the payload (True when they gave none)."""
    if job.get("resumes") is not None:
        return InOrder(job["resumes"], trace, job["run_dir"])
    if job.get("resume_by"):
        return Answers(load_function(job["resume_by"])[0])
    value = True if job.get("resume") is None else job["resume"]
    return Answers(lambda payload: value)


def answered(interrupts: tuple, answer: Answers) -> Command:
    """What resumes the pending interrupts: one answer, or one per interrupt by its id."""
    if len(interrupts) == 1:
        return Command(resume=answer(interrupts[0]))
    return Command(resume={pending.id: answer(pending) for pending in interrupts})


def resume_of(state: object, answer: Answers) -> Command | None:
    """What goes on past a stop: the answers to its interrupts, or None past a breakpoint."""
    return answered(state.interrupts, answer) if state.interrupts else None
