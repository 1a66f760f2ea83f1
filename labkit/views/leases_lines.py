"""The one-line answers lesson 6's cells print under their predictions: what each worker of a
race did and the outcome, when each worker renewed by name, a sweep's outcomes counted per
method, and step mode's next move. Words from the catalogue, codes from the results; never a
dict or a tuple as Python prints it (issue 27)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from labkit.bench.errors import check_items
from labkit.language import padded, say
from labkit.studies.leases.experiment import ClaimResult, Move, check_result
from labkit.studies.leases.spec import METHODS
from labkit.views.leases_race import RESULTS, worker_text
from labkit.views.leases_words import said

__all__ = ["move_words", "race_line", "renewals_line", "sweep_counts"]

WORKERS = ("w1", "w2")


def pair(label: str, value: object) -> str:
    return say("facts.pair", label=label, value=value)


def race_line(result: ClaimResult) -> str:
    """Each worker's token, write and done mark, the writes applied and the outcome:
    "w1: token 33, write applied, done | w2: … | writes applied: 2 | outcome: both ran"."""
    r = check_result(result)
    exits = r.summary()["exits"]
    pairs = [pair(w, worker_text(r.reports.get(w, {}), exits.get(w))) for w in WORKERS]
    pairs.append(pair(say("facts.label.writes_applied"), r.counts["applied"]))
    pairs.append(pair(say("facts.label.outcome"), said(r.outcome)))
    return say("facts.separator").join(pairs)


def renewals_line(result: ClaimResult) -> str:
    """Each renewal by name in the trace, in the order it happened: who, when (lab time), and
    whether a row with its name was there to extend; "no renewal" when none was tried."""
    r = check_result(result)
    said_each = [
        say(
            f"leases.renewal.{'held' if e['held'] else 'lost'}",
            worker=e["role"],
            ms=e["lab_ms"],
        )
        for e in r.trace()
        if e["event"] == "renew"
    ]
    return say("facts.separator").join(said_each) or say("leases.renewal.none")


def sweep_counts(results: Sequence[ClaimResult]) -> str:
    """A line per method of a sweep: each outcome it ended in and how often, most often first."""
    results = check_items("results", results, ClaimResult, RESULTS)
    methods = [m for m in METHODS if any(r.spec.method == m for r in results)]
    width = max(map(len, methods), default=0) + 2
    lines = []
    for method in methods:
        counts = Counter(r.outcome for r in results if r.spec.method == method)
        each = [say("leases.sweep.count", word=said(o), count=n) for o, n in counts.most_common()]
        lines.append(padded(method, width) + say("facts.list_separator").join(each))
    return "\n".join(lines)


def move_words(move: Move | None) -> str:
    """Step mode's next move ("w1 frozen; next: the clock moves to 200 ms and w2 arrives to
    claim"), said from its code and numbers; "" once the schedule is over."""
    if move is None:
        return ""
    fields = {"point": move.point} if move.point else {"arrival": move.ms, "pause": move.ms}
    return say(f"leases.move.{move.code}", **fields)
