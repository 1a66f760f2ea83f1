"""What the room said: each participant's prediction and real outcome per crash point, and
the crash point the instructor pushed. In memory: a workshop's room lives as long as its hub.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from labkit.bench.errors import check_choice
from labkit.studies.commit_window.orders import ORDERS, get_order
from labkit.studies.commit_window.spec import KILL_MODES

# what a participant may predict, and what a run may report: the commit window's outcome words
ANSWERS = ("consistent", "duplicate", "lost", "unfinished")
REPORTED = (*ANSWERS, "failed")


def crash_point(order: object, kill_at: object, kill_mode: object = "exit") -> str:
    """The crash point's name, "order/kill_at/kill_mode", each part checked (a LabError
    naming the valid choices)."""
    order = check_choice("order", order, ORDERS)
    kill_at = get_order(order).check_kill_point(kill_at)
    kill_mode = check_choice("kill_mode", kill_mode, KILL_MODES)
    return f"{order}/{kill_at}/{kill_mode}"


def parts(point: str) -> dict[str, str]:
    order, kill_at, kill_mode = point.split("/")
    return {"order": order, "kill_at": kill_at, "kill_mode": kill_mode}


@dataclass
class Room:
    """Answers by crash point, then by participant: a participant's last word counts."""

    predictions: dict[str, dict[str, str]] = field(default_factory=dict)
    outcomes: dict[str, dict[str, str]] = field(default_factory=dict)
    next_point: str | None = None
    version: int = 0  # bumped by every change: the page redraws only when it moved

    def predict(self, user: str, point: str, answer: object) -> None:
        answer = check_choice("prediction", answer, ANSWERS)
        self.predictions.setdefault(point, {})[user] = answer
        self.version += 1

    def report(self, user: str, point: str, outcome: object) -> None:
        outcome = check_choice("outcome", outcome, REPORTED)
        self.outcomes.setdefault(point, {})[user] = outcome
        self.version += 1

    def push(self, point: str) -> None:
        self.next_point = point
        self.version += 1

    def mine(self, user: str) -> dict:
        """One participant's own answers, and nobody else's."""
        return {
            "predictions": {p: by[user] for p, by in self.predictions.items() if user in by},
            "outcomes": {p: by[user] for p, by in self.outcomes.items() if user in by},
            "next": self.next_point and parts(self.next_point),
        }

    def view(self) -> dict:
        """The room, for the instructor: per crash point, how many predicted each outcome and
        how many runs produced each; counts only, no names."""
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
        }
