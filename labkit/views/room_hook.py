"""A crash panel's part in the workshop room (labkit/room/), under the workshop hub only:
the crash point the instructor pushed as the panel's default, a "you predict" picker, the
prediction sent when Run is clicked (before the crash), the run's outcome once it is known.
Outside the hub it adds nothing and opens no connection.
"""

from __future__ import annotations

import ipywidgets as widgets

from labkit.language import say
from labkit.room import client
from labkit.room.store import ANSWERS
from labkit.views.commit_window_words import outcome_name


def room_defaults(order: str, kill_at: str, kill_mode: str) -> tuple[str, str, str]:
    """The pushed crash point under the hub, else the panel's own defaults."""
    pushed = client.pushed_point() if client.room_url() else None
    if not pushed:
        return order, kill_at, kill_mode
    return pushed["order"], pushed["kill_at"], pushed["kill_mode"]


class RoomHook:
    """The picker and the note a panel shows under the hub (`widgets`, empty elsewhere)."""

    def __init__(self) -> None:
        self.widgets: list[widgets.Widget] = []
        self.point: dict | None = None
        if client.room_url() is None:
            return
        self.picker = widgets.ToggleButtons(
            options=[(outcome_name(answer), answer) for answer in ANSWERS],
            value=None,
            description=say("room.your_prediction"),
        )
        self.note = widgets.HTML(say("room.predict_first"))
        self.widgets = [self.picker, self.note]

    def before_run(self, order: str, kill_at: str, kill_mode: str) -> None:
        """Send the prediction, if one is picked, for the run about to start."""
        if not self.widgets:
            return
        self.point = {"order": order, "kill_at": kill_at, "kill_mode": kill_mode}
        if self.picker.value and client.predict(self.point, self.picker.value):
            self.note.value = say("room.sent")

    def after_run(self, outcome: str) -> None:
        """Send the outcome the run produced."""
        if self.widgets and self.point:
            client.report(self.point, outcome)
