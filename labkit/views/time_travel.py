"""The view of time travel (lesson 4's last part): per node of the linear graph, how many times
it ran and how many tickets it holds after the first run, the replay and the fork, with a fresh
key per node run and with a stable key per (thread, node)."""

from __future__ import annotations

from collections.abc import Mapping

from IPython.display import HTML, display

from labkit.language import say
from labkit.language.failures import failure_text
from labkit.studies.durability.time_travel import KEYS, NODES, PHASES
from labkit.views.tables import grid_html

__all__ = ["savers_line", "show_time_travel", "time_travel_html", "time_travel_line"]


def after_each(result: Mapping, node: str, count: str) -> str:
    """A node's count after each phase: "1 → 2 → 3"."""
    return " → ".join(str(result["after"][phase][node][count]) for phase in PHASES)


def ran_again(result: Mapping, phase: str, before: str) -> list[str]:
    """The nodes that started again in `phase` (after `before`)."""
    after = result["after"]
    return [node for node in NODES if after[phase][node]["runs"] > after[before][node]["runs"]]


def time_travel_html(fresh: Mapping, stable: Mapping) -> str:
    """A row per node: its runs, then its tickets with each key, after first → replay → fork."""
    columns = ("node", "runs", "fresh", "stable")
    rows = [
        (node, after_each(fresh, node, "runs"), after_each(fresh, node, "effects"))
        + (after_each(stable, node, "effects"),)
        for node in NODES
    ]
    return grid_html([say(f"time_travel.column.{c}", phases=phases()) for c in columns], rows)


def phases() -> str:
    return " → ".join(say(f"time_travel.phase.{phase}") for phase in PHASES)


def time_travel_line(fresh: Mapping, stable: Mapping) -> str:
    """What the table says, in one line: which nodes ran again, the tickets in all."""
    if fresh["failure"] or stable["failure"]:
        return say(
            "time_travel.failed", failure=failure_text(fresh["failure"] or stable["failure"])
        )

    def tickets(result: Mapping) -> int:
        return sum(counts["effects"] for counts in result["after"]["fork"].values())

    return say(
        "time_travel.line",
        replay=say("facts.list_separator").join(ran_again(fresh, "replay", "first")),
        fork=say("facts.list_separator").join(ran_again(fresh, "fork", "replay")),
        fresh=tickets(fresh),
        stable=tickets(stable),
        nodes=len(NODES),
    )


def savers_line(on_sqlite: Mapping, on_postgres: Mapping) -> str:
    """Whether both savers gave the same runs and tickets per node, for each key (results by
    key: `{"fresh": run_time_travel("fresh"), ...}`)."""
    same = all(on_sqlite[key]["after"] == on_postgres[key]["after"] for key in KEYS)
    return say(f"time_travel.savers.{'same' if same else 'differ'}")


def show_time_travel(fresh: Mapping, stable: Mapping) -> None:
    display(HTML(time_travel_html(fresh, stable)))
    print(time_travel_line(fresh, stable))
