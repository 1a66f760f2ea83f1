"""The explorer's words: a row's label, what it came after, its outcome, what is wrong, the
summary and the matrix as text, in the reader's language (explorer.toml).

The study (`labkit.studies.explorer.report`) keeps codes and fields: a row's outcome and
operation, the default checker's finding, why a write went unwatched, what a point saved
(`said`, beside its `detail` in the recording's words). Every word is said from them here,
the file names as they are.
"""

from __future__ import annotations

from labkit.language import display_width, padded, say
from labkit.language.failures import failure_text
from labkit.studies.explorer.report import (
    FILES_TOGETHER,
    Exploration,
    PointResult,
    outside_kinds,
    replays_twice,
)

__all__ = [
    "complaint_words",
    "crash_after",
    "detail_words",
    "failed_words",
    "left_running",
    "matrix_text",
    "outcome_word",
    "point_label",
    "point_outcome",
    "recovered_when",
    "run_folder",
    "summary_text",
    "unwatched_words",
    "verb",
    "what_is_wrong",
]


def summary_text(found: Exploration) -> str:
    """One line: points, states, what failed, what went unseen, why it stopped."""
    explored = sum(p.n is not None and p.same_as is None for p in found.points)
    head = say(
        "explorer.report.head",
        target=found.target,
        points=found.crash_points,
        states=found.crash_states,
        explored=explored,
        seconds=f"{found.seconds:.2f}",
    )
    verdict = (
        say("explorer.report.all_consistent")
        if not found.failing
        else say(
            "explorer.report.failing",
            count=len(found.failing),
            points=comma().join(f"{point_label(p)} {point_outcome(p)}" for p in found.failing),
        )
    )
    if replays_twice(found.spec):
        verdict += say("explorer.report.varied", count=sum(p.varies for p in found.points))
    if found.spec.get("ignore_files"):  # said beside the verdict it qualifies
        verdict += say("explorer.report.not_judged", files=comma().join(found.spec["ignore_files"]))
    if found.node_caches:  # so is what it left unjudged of its own accord
        verdict += say("explorer.report.node_caches", files=comma().join(found.node_caches))
    if found.spec.get("harmless_programs"):  # so is what it took on the reader's word
        programs = comma().join(found.spec["harmless_programs"])
        verdict += say("explorer.report.harmless", programs=programs)
    why = failed_words(found.stopped_by) if found.stopped_by else found.stopped
    stopped = say("explorer.report.stopped", why=why) if found.stopped else ""
    return say(
        "explorer.report.summary",
        head=head,
        verdict=verdict,
        unseen=unseen_words(found),
        left=left_running(found.points),
        stopped=stopped,
    )


def unseen_words(found: Exploration) -> str:
    """What the exploration could not crash apart or reach: unwatched writes, files, services
    and programs outside the run folder, a saver explored on SQLite instead; or ""."""
    said = say("explorer.report.semicolon").join(map(unwatched_words, found.unwatched))
    said = say("explorer.report.unseen", writes=said) if found.unwatched else ""
    files, services, programs = outside_kinds(found.outside)
    if files:
        said += say("explorer.report.outside", files=comma().join(files))
    if services:
        said += say("explorer.report.network", services=comma().join(services))
    if programs:
        said += say("explorer.report.programs", programs=comma().join(programs))
    if found.replaced:
        postgres = "_postgres" if found.replaced["postgres"] else ""
        said += say(f"explorer.report.on_sqlite{postgres}", saver=found.replaced["saver"])
    return said


def comma() -> str:
    return say("explorer.report.comma")


def left_running(points: list[PointResult]) -> str:
    """What the reader's code left running in the runs (the lab ended each), or ""."""
    left = [name for p in points for name in p.left]
    if not left:
        return ""
    names = comma().join(dict.fromkeys(left))  # each once, as first seen
    one_or_many = "one" if len(left) == 1 else "many"
    return say(f"explorer.report.left_{one_or_many}", count=len(left), names=names)


def point_label(point: PointResult) -> str:
    """A point's label as the reader reads it: its number, or "no crash" in their language."""
    return say("explorer.report.no_crash") if point.n is None else point.label


def outcome_word(outcome: str) -> str:
    """An outcome's word in the reader's language ("duplicate": 重复)."""
    return say(f"explorer.outcome.{outcome}")


def crash_after(point: PointResult) -> str:
    """What was made durable just before the point ("commit effect.db"), or, for the run
    without a crash, that it ran to its end."""
    if point.n is None:
        return say("explorer.report.run_to_end")
    return say("explorer.report.op_detail", verb=verb(point.op), detail=detail_words(point))


def point_outcome(point: PointResult) -> str:
    """A row's outcome in the reader's language, said to vary where two replays disagreed."""
    return outcome_word(point.outcome) + (say("explorer.report.varies") if point.varies else "")


def verb(op: str) -> str:
    """A crash point's operation ("commit", "put_writes") in the reader's language."""
    return say(f"explorer.verb.{op}")


def detail_words(point: PointResult) -> str:
    """What a point saved, in the reader's language: its code's words, or its files' names."""
    if point.said:
        fields = {k: v for k, v in point.said.items() if k not in ("code", "ns")}
        what = say(f"explorer.detail.{point.said['code']}", **fields)
        if point.said.get("ns"):  # a subgraph's save: which one
            return say("explorer.detail.in_subgraph", what=what, ns=point.said["ns"])
        return what
    return say("explorer.detail.together").join(point.detail.split(FILES_TOGETHER))


def what_is_wrong(point: PointResult) -> str:
    """The checker's complaint (or why no outcome is claimed), without the outcome's word."""
    if point.failed:
        return failed_words(point.failed, crash_after(point))
    if point.failure:
        return failure_text(point.failure)
    return complaint_words(point.finding, point.complaint, point.outcome)


def field_words(value: object) -> object:
    """A field of a `failed` code as said: paths joined, a worker's failure (bench.failures)
    in words, anything else as it is."""
    if isinstance(value, (list, tuple)):
        return comma().join(value)
    return failure_text(value) if isinstance(value, dict) else value


def failed_words(failed: dict, what: str = "") -> str:
    """Why no outcome is claimed (or why the exploration stopped), in the reader's language;
    `what` is the crash point's operation, for a process that did not die there."""
    fields = {k: field_words(v) for k, v in failed.items() if k != "code"}
    return say(f"explorer.failed.{failed['code']}", what=what, **fields)


def complaint_words(finding: dict | None, complaint: str | None, outcome: str) -> str:
    """What the checker said, without the outcome's word: the default checker's finding in the
    reader's language, a reader's own line as they wrote it."""
    if finding is None:  # its line names the outcome in words: "not judged: ..."
        return (complaint or "").removeprefix(f"{outcome.replace('_', ' ')}: ")
    fields = dict(finding)
    if fields.get("table"):
        fields["what"] = say("explorer.finding.table", file=fields["file"], table=fields["table"])
    elif fields.get("file"):
        fields["what"] = fields["file"]
    return say(f"explorer.finding.{fields.pop('code')}", **fields)


def unwatched_words(entry: dict) -> str:
    """Why some writes could not be crashed apart, in the reader's language."""
    files = say("explorer.detail.together").join(entry["files"])
    return say(f"explorer.unwatched.{entry['reason']}", files=files, commits=entry.get("commits"))


def recovered_when(point: PointResult) -> str:
    """For a failing crash point, the restart whose recovery showed it ("recovered in the
    next month"); "" for a consistent one, which every restart found consistent."""
    if point.n is None or point.restart is None or point.outcome == "consistent":
        return ""
    return say("explorer.report.recovered", when=say(f"explorer.restart.{point.restart}"))


def run_folder(point: PointResult) -> str:
    """Where the point's run is, or which point's run shows the same crash state."""
    if point.same_as:
        return say("explorer.report.same_state", n=point.same_as)
    return point.run_dir or ""


def matrix_text(found: Exploration) -> str:
    """The matrix as a terminal table: point, operation, source line, outcome, run folder;
    then the summary."""
    names = ("point", "crash_after", "source", "outcome", "wrong_folder")
    rows = [tuple(say(f"explorer.report.{name}") for name in names)]
    for p in found.points:
        wrong = " · ".join(filter(None, [recovered_when(p), what_is_wrong(p), run_folder(p)]))
        rows.append((point_label(p), crash_after(p), p.where or "", point_outcome(p), wrong))
    widths = [min(max(display_width(r[i]) for r in rows), 48) for i in range(4)]
    lines = [
        "  ".join(padded(cell, width) for cell, width in zip(r[:4], widths, strict=True))
        + "  "
        + r[4]
        for r in rows
    ]
    return "\n".join([*lines, summary_text(found)])
