"""What the room said: each participant's prediction and real outcome per crash point, their
predictions for the exercises' cases, and the crash point the instructor pushed.

Kept in memory for the page and written through to SQLite in the room's own folder (owner-only:
the folder 0700, the file 0600), so that a restart of the room (or of its hub) keeps the
instructor's view; without a path, in memory only (a test's room).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import Counter
from pathlib import Path

from labkit.bench.errors import check_choice, refusal
from labkit.studies.commit_window.orders import ORDERS, get_order
from labkit.studies.commit_window.spec import KILL_MODES

# what a participant may predict, and what a run may report: the commit window's outcome words
ANSWERS = ("consistent", "duplicate", "lost", "unfinished")
REPORTED = (*ANSWERS, "failed")
KINDS = ("predict", "report", "exercise")  # crash points' predictions, outcomes; exercises'
EXERCISE = re.compile(r"lesson\d+\.[a-z0-9_]{1,40}")  # an Exercise's name: lesson7.predict_crash
CASE = re.compile(r"[A-Za-z0-9_@/.:-]{1,80}")  # a case's name: before_commit, effect_first/effect
ANSWER_LENGTH = 40  # an exercise's answer as its form read it: a word, a count, kept/lost
WORD = re.compile(rf"[A-Za-z0-9_ .:/@+-]{{1,{ANSWER_LENGTH}}}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    kind TEXT NOT NULL, point TEXT NOT NULL, user TEXT NOT NULL, answer TEXT NOT NULL,
    PRIMARY KEY (kind, point, user));
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT);
"""


def crash_point(order: object, kill_at: object, kill_mode: object = "exit") -> str:
    """The crash point's name, "order/kill_at/kill_mode", each part checked (a LabError
    naming the valid choices)."""
    order = check_choice("order", order, ORDERS)
    kill_at = get_order(order).check_kill_point(kill_at)
    kill_mode = check_choice("kill_mode", kill_mode, KILL_MODES)
    return f"{order}/{kill_at}/{kill_mode}"


def exercise_case(exercise: object, case: object) -> str:
    """An exercise's case as the room keys it, "exercise|case", each part checked."""
    if not isinstance(exercise, str) or not EXERCISE.fullmatch(exercise):
        raise refusal("room_exercise", value=repr(exercise))
    if not isinstance(case, str) or not CASE.fullmatch(case):
        raise refusal("room_case", value=repr(case))
    return f"{exercise}|{case}"


def parts(point: str) -> dict[str, str]:
    order, kill_at, kill_mode = point.split("/")
    return {"order": order, "kill_at": kill_at, "kill_mode": kill_mode}


def open_private(path: Path) -> sqlite3.Connection:
    """The room's database at `path`: its folder made 0700, the file 0600 (made so, before
    SQLite opens it), both refused if another user could read them."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for where in (path.parent, path):
        if where.stat().st_mode & 0o077:
            raise refusal("room_not_private", path=str(where))
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.executescript(SCHEMA)
    return db


class Room:
    """Answers by kind, then crash point (or exercise's case), then participant: a
    participant's last word counts."""

    def __init__(self, path: Path | None = None) -> None:
        self.answers: dict[str, dict[str, dict[str, str]]] = {kind: {} for kind in KINDS}
        self.next_point: str | None = None
        self.version = 0  # bumped by every change: the page redraws only when it moved
        self.db = open_private(path) if path else None
        if self.db:
            for kind, point, user, answer in self.db.execute("SELECT * FROM answers"):
                self.answers.setdefault(kind, {}).setdefault(point, {})[user] = answer
            state = dict(self.db.execute("SELECT key, value FROM state"))
            self.next_point = state.get("next")
            self.version = int(state.get("version", 0))

    @property
    def predictions(self) -> dict[str, dict[str, str]]:
        return self.answers["predict"]

    @property
    def outcomes(self) -> dict[str, dict[str, str]]:
        return self.answers["report"]

    def keep(self, kind: str, point: str, user: str, answer: str) -> None:
        self.answers[kind].setdefault(point, {})[user] = answer
        self.version += 1
        if self.db:
            with self.db:  # one transaction: the answer and the version together
                self.db.execute("BEGIN")
                self.db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                    (kind, point, user, answer),
                )
                self.save_state()

    def save_state(self) -> None:
        state = {"version": str(self.version), "next": self.next_point}
        self.db.executemany("INSERT OR REPLACE INTO state VALUES (?, ?)", state.items())

    def predict(self, user: str, point: str, answer: object) -> None:
        self.keep("predict", point, user, check_choice("prediction", answer, ANSWERS))

    def report(self, user: str, point: str, outcome: object) -> None:
        self.keep("report", point, user, check_choice("outcome", outcome, REPORTED))

    def exercise(self, user: str, case: str, answer: object) -> None:
        """A prediction for one case of an exercise (`case` from exercise_case), as the
        exercise's form read it: a short word or number."""
        if not isinstance(answer, str | int | float | bool) or not WORD.fullmatch(str(answer)):
            raise refusal("room_answer", length=ANSWER_LENGTH)
        self.keep("exercise", case, user, str(answer))

    def push(self, point: str) -> None:
        self.next_point = point
        self.version += 1
        if self.db:
            with self.db:
                self.db.execute("BEGIN")
                self.save_state()

    def mine(self, user: str) -> dict:
        """One participant's own answers, and nobody else's."""
        own = lambda kind: {p: by[user] for p, by in self.answers[kind].items() if user in by}  # noqa: E731
        return {
            "predictions": own("predict"),
            "outcomes": own("report"),
            "exercises": own("exercise"),
            "next": self.next_point and parts(self.next_point),
        }

    def view(self) -> dict:
        """The room, for the instructor: per crash point, how many predicted each outcome and
        how many runs produced each; per exercise's case, how many gave each answer. Counts
        only, no names."""
        points = sorted(set(self.predictions) | set(self.outcomes))
        return {
            "version": self.version,
            "next": self.next_point and parts(self.next_point),
            "points": [
                {
                    "point": point,
                    **parts(point),
                    "predicted": dict(Counter(self.predictions.get(point, {}).values())),
                    "happened": dict(Counter(self.outcomes.get(point, {}).values())),
                }
                for point in points
            ],
            "exercises": [
                {
                    "exercise": key.split("|")[0],
                    "case": key.split("|")[1],
                    "predicted": dict(Counter(by.values())),
                }
                for key, by in sorted(self.answers["exercise"].items())
            ],
        }
