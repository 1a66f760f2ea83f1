"""Lesson 6's LangGraph race: two resumers of one thread, what each ran, the publish runs,
and the thread's checkpoints as a tree, where a fork shows."""

from __future__ import annotations

from html import escape

from labkit.bench.errors import check_record
from labkit.language import say
from labkit.language.failures import error_text, failure_text
from labkit.views import show_html
from labkit.views.given_values import given_value
from labkit.views.leases_words import outcome_html, outcome_text

GRAPH_RESULT = "graph_race"  # a code of cli.expected


def short(checkpoint: dict) -> str:
    """A checkpoint id's last 8 characters: enough to tell the checkpoints of a thread apart."""
    return checkpoint["checkpoint_id"][-8:]


def checkpoint_lines(checkpoints: list[dict]) -> list[str]:
    """The thread's checkpoints as a tree (children under their parent): a fork is a parent
    with two children."""
    children: dict[str | None, list[dict]] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c["checkpoint_id"]):
        children.setdefault(checkpoint["parent"], []).append(checkpoint)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        kids = children.get(parent, [])
        for n, checkpoint in enumerate(kids, 1):
            fork = say("leases.graph.fork", n=n, count=len(kids)) if len(kids) > 1 else ""
            interrupts = checkpoint["interrupts"]
            waits = (
                say("leases.graph.interrupt", value=given_value(interrupts[0]))
                if interrupts
                else ""
            )
            line = say(
                "leases.graph.checkpoint",
                step=checkpoint["step"],
                id=short(checkpoint),
                next=nodes(checkpoint["next"]) or say("leases.graph.finished"),
                waits=waits,
                fork=fork,
            )
            lines.append(f"{'  ' * depth}{line}")
            walk(checkpoint["checkpoint_id"], depth + 1)

    walk(None, 0)
    return lines


def nodes(names: list[str]) -> str:
    """LangGraph's next nodes by name ("review"), not as Python prints the list."""
    return say("facts.list_separator").join(names)


def token_text(fence: int) -> str:
    """A publish's token; 0 is none (the resumer claimed nothing)."""
    return say("leases.graph.token", fence=fence) if fence else say("leases.graph.no_token")


def resumer_text(role: str, resumer: dict) -> str:
    if resumer.get("error"):
        return say("leases.graph.died", role=role, error=error_text(resumer["error"]))
    if resumer.get("ran") is False:
        return say("leases.graph.not_resumed", role=role)
    token = say("leases.graph.with_token", fence=resumer["fence"]) if resumer.get("claimed") else ""
    found = nodes(resumer.get("found_next") or []) or say("common.nothing")
    return say("leases.graph.resumed", role=role, token=token, next=found)


def format_graph_race(run: dict) -> str:
    """Two resumers of one thread: what each ran, the publish runs, the checkpoint tree."""
    from labkit.studies.leases.resume import GRAPH_CASES

    run = check_record("run", run, ("case", "resumers", "checkpoints"), GRAPH_RESULT)
    publishes = [
        say(
            "leases.graph.publish",
            role=line["role"],
            token=token_text(line["fence"]),
            what=say("leases.graph.applied" if line["applied"] else "leases.graph.refused"),
        )
        for line in run["publish_runs"]
    ]
    ran = say(
        "leases.graph.publish_ran_once" if len(publishes) == 1 else "leases.graph.publish_ran",
        count=len(publishes),
        runs=say("text.semicolon").join(publishes) or say("leases.graph.never"),
    )
    return "\n".join(
        [
            say("text.meaning", word=run["case"], meaning=GRAPH_CASES[run["case"]]),
            *(f"  {resumer_text(role, r)}" for role, r in run["resumers"].items()),
            f"  {ran}",
            f"  {outcome_text(run['outcome'])}",
            *(
                [f"  {say('leases.race.why', failure=failure_text(run['failure']))}"]
                if run["failure"]
                else []
            ),
            f"  {say('leases.graph.forks' if run['forks'] else 'leases.graph.no_fork')}",
            *(f"    {line}" for line in checkpoint_lines(run["checkpoints"])),
            f"  {say('leases.race.run_folder', folder=run['run_dir'])}",
        ]
    )


def graph_race_html(run: dict) -> str:
    """The same as `format_graph_race`, for a notebook."""
    text = escape(format_graph_race(run))
    return f"{outcome_html(run['outcome'], run['failure'])}<pre>{text}</pre>"


def show_graph_race(run: dict) -> None:
    """Two resumers of one LangGraph thread: what each ran, the checkpoint tree."""
    show_html(graph_race_html(run))
