"""The checker: after a crash and a recovery, is what the files hold right?

A checker is a function of one `CrashState`; it returns None when the state is right, or one
line that says what is wrong ("duplicate: ...", "lost: ..."). It runs in the recovery worker,
so a reader's checker is the reader's code in the reader's lab, like the code it checks.

The default checker takes the run without a crash as the truth: every effect that run made
(each table's rows, each line of a file it fsynced; a checkpointer's own file, the calls'
history and the port file of lesson 5's service aside) must be
there exactly as often after any crash and recovery, and the recovered run must have finished.
Where the run without a crash is itself wrong (study 001's fresh key makes two tickets with no
crash at all), only a checker that knows the operation can say so: pass your own.
Worker-side: standard library only.
"""

from __future__ import annotations

from labkit.studies.explorer.services import NOT_EFFECTS

__all__ = ["CHECKPOINT_FILE", "OUTCOMES", "CrashState", "default_checker", "outcome_of"]

OUTCOMES = ("consistent", "duplicate", "lost", "inconsistent")
CHECKPOINT_FILE = "checkpoints.db"  # the explorer's checkpointer: LangGraph's state, no effect


class CrashState:
    """One crash point's story: the files as the kill left them and after recovery, the run
    without a crash at its end, and whether recovery finished the run. (A plain class, not a
    dataclass: a worker starts faster without `dataclasses`.)"""

    def __init__(
        self,
        point: dict | None,  # n, op, detail, where; None for the run without a crash
        at_kill: dict,  # file -> {table: rows} for SQLite files, file -> [lines] for others
        after: dict,
        clean: dict,  # the run without a crash, at its end
        finished: bool,  # recovery ran the work to its end (done=1; the graph reached END)
        recovery_error: str | None = None,  # the recovery's exception, in one line
        run_dir: str = "",
    ) -> None:
        self.point, self.at_kill, self.after, self.clean = point, at_kill, after, clean
        self.finished, self.recovery_error, self.run_dir = finished, recovery_error, run_dir

    def __repr__(self) -> str:
        where = "no crash" if self.point is None else f"crash point {self.point['n']}"
        return f"CrashState({where}, finished={self.finished}, run_dir={self.run_dir!r})"

    def rows(self, table: str, which: str = "after") -> list[list]:
        """The rows of `table` in whichever SQLite file holds it ([] if none does)."""
        for content in getattr(self, which).values():
            if isinstance(content, dict) and table in content:
                return content[table]
        return []

    def lines(self, file: str, which: str = "after") -> list:
        """The lines of a file of the run (JSON lines as dicts, without pid and time)."""
        content = getattr(self, which).get(file, [])
        return content if isinstance(content, list) else []


def effects(state: dict) -> dict[str, int]:
    """How many rows each table holds and how many lines each other file: the effects."""
    counted = {}
    for file, content in state.items():
        if file == CHECKPOINT_FILE or file in NOT_EFFECTS:
            continue
        if isinstance(content, dict):
            counted.update({f"{file}:{table}": len(rows) for table, rows in content.items()})
        else:
            counted[file] = len(content)
    return counted


def default_checker(state: CrashState) -> str | None:
    """Every effect of the run without a crash exactly as often, and the run finished."""
    if state.recovery_error:
        return f"lost: recovery failed: {state.recovery_error}"
    made, expected = effects(state.after), effects(state.clean)
    for name in sorted(set(made) | set(expected)):
        have, want = made.get(name, 0), expected.get(name, 0)
        if have != want:
            word = "duplicate" if have > want else "lost"
            what = name.replace(":", " table ") if ":" in name else name
            return f"{word}: {what} holds {have} where the run without a crash left {want}"
    if not state.finished:
        return "lost: recovery did not finish the run"
    return None


def outcome_of(complaint: str | None) -> str:
    """The matrix's word for a checker's answer: consistent when it has nothing to say."""
    if complaint is None:
        return "consistent"
    first = complaint.split(":")[0].strip()
    return first if first in OUTCOMES else "inconsistent"
