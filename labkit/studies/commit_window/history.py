"""What each file held after each event of a run, rebuilt from the trace alone.

The trace starts with the rows the files were created with, and every commit event lists the
rows it wrote. Replaying those commits in order gives the state at any moment. The rebuilt end
state must equal the snapshot read from the files: if it does not, the trace is wrong, and
that is an error, never something to paper over.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from labkit.bench.snapshot import Snapshot

__all__ = ["Frame", "HistoryMismatch", "rebuild_history"]

Rows = dict[str, dict[str, list[list]]]  # file -> table -> rows


class HistoryMismatch(AssertionError):
    """The state rebuilt from the trace differs from what the files hold."""


@dataclass
class Frame:
    """The moment right after one trace event: the event, and every file's committed rows."""

    index: int
    event: dict
    rows: Rows


def apply_commit(rows: Rows, event: dict, columns: dict[str, list[str]]) -> None:
    """Apply one commit's writes (inserts and updates keyed by `id`) to `rows`."""
    for write in event["writes"]:
        table = rows[event["file"]][write["table"]]
        new = [write["row"][c] for c in columns[write["table"]]]
        for i, row in enumerate(table):
            if row[0] == new[0]:
                table[i] = new
                break
        else:
            table.append(new)


def rebuild_history(events: list[dict], final: Snapshot) -> list[Frame]:
    """One frame per event, starting from the `created` event; checked against `final`."""
    created = next(e for e in events if e["event"] == "created")
    rows: Rows = copy.deepcopy(created["rows"])
    columns = {t: tab.columns for tables in final.files.values() for t, tab in tables.items()}
    frames = []
    for index, event in enumerate(events):
        if event["event"] == "commit":
            apply_commit(rows, event, columns)
        frames.append(Frame(index, event, copy.deepcopy(rows)))
    if rows != final.rows:
        raise HistoryMismatch(f"trace rebuilds {rows}, but the files hold {final.rows}")
    return frames
