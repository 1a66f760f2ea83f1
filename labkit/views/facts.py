"""A line of labelled values, for a notebook cell that reports a few numbers of its own.

The labels come from the catalogue (`facts.toml`), keyed by the argument's name, so the same
cell prints English or Chinese:

    print_facts(first_worker_exit=91, outcome="lost")
    first worker exit: 91 | outcome: lost
    第一个 worker 的退出码：91 ｜ 结果：丢失

A value is shown as it is, but for the words the catalogue knows (`[value]`: `True`/`False`
as yes/no; an outcome code as the lessons name it), which are shown in the reader's language.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.bench.errors import check_choice
from labkit.language import catalogue, language, say
from labkit.views.commit_window_words import outcome_name

__all__ = ["facts_line", "print_facts", "progress_lines"]

COUNTING = ("trials", "steps")  # what a progress line counts


def facts_line(**values: object) -> str:
    """`label: value` for each keyword, in the order given, joined by the catalogue's separator."""
    pairs = [
        say("facts.pair", label=say(f"facts.label.{name}"), value=shown(value))
        for name, value in values.items()
    ]
    return say("facts.separator").join(pairs)


def print_facts(**values: object) -> None:
    """Print `facts_line(**values)`."""
    print(facts_line(**values))


def progress_lines(every: int = 1, counting: str = "trials") -> Callable[[int, int, object], None]:
    """A `progress` for a cell that runs many trials: "trials done: 5/20" every `every` trials
    and at the last, so that a long cell shows it is working (and the kernel's stop stops it).
    `counting="steps"` says "steps done" instead, for one run of several slow steps."""
    label = f"{check_choice('counting', counting, COUNTING)}_done"

    def line(done: int, total: int, _item: object = None) -> None:
        if done % every == 0 or done == total:
            print_facts(**{label: f"{done}/{total}"})

    return line


def shown(value: object) -> str:
    """A value in the reader's words where the catalogue has them, else as Python prints it."""
    if isinstance(value, list | tuple):
        return say("facts.list_separator").join(map(shown, value))
    if isinstance(value, bool):
        return say(f"facts.value.{str(value).lower()}")
    if isinstance(value, str) and f"commit_window.name.{value}" in catalogue(language()):
        return outcome_name(value)  # an outcome code
    return str(value)
