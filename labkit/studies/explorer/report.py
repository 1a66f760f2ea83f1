"""The explorer's report: the matrix by crash point, with the source line, the outcome and the
run folder of each, whether the exploration ran to its end or was stopped, and the same as
plain text. Results only: it runs nothing.

Its words are the reader's language (explorer.toml), looked up in the kernel when the report is
read: the trial server's fork that explores imports this module, and must not load the
catalogue, so `labkit.language` is imported where a sentence is made, not at the top. A row
holds codes (its outcome, its operation, the default checker's finding, why a write went
unwatched, what a point saved: `said`, beside its `detail` in the recording's words, which
names the point when a replay looks for it); the words are said from them here, the file
names as they are.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = [
    "EXPLORED_FILE",
    "Exploration",
    "PointResult",
    "SERVICE",
    "complaint_words",
    "crash_after",
    "detail_words",
    "failed_words",
    "matrix_text",
    "outcome_word",
    "point_label",
    "point_outcome",
    "read_explored",
    "replays_twice",
    "recovered_when",
    "run_folder",
    "unwatched_words",
    "verb",
    "what_is_wrong",
]

EXPLORED_FILE = "explored.jsonl"  # one line per crash point as it is explored
NO_CRASH = "no crash"  # the label of the run without a crash (a key in notebooks' dicts)
FILES_TOGETHER = " and "  # a commit seen in two files at once: "a.db and b.db"
SERVICE = "tcp://"  # an "outside" entry that is a network connection, not a file


@dataclass
class PointResult:
    """One row of the matrix: a crash point (or the run without a crash, `n` None)."""

    n: int | None
    op: str  # commit, fsync, put, put_writes; "run" for the run without a crash
    detail: str  # which file, which checkpoint, which node's writes
    where: str | None  # the reader's file:line
    outcome: str  # consistent, duplicate, lost, inconsistent; "failed": no outcome claimed
    complaint: str | None  # the checker's line
    run_dir: str | None
    kill_mode: str = ""
    same_as: int | None = None  # not run again: its crash state equals this point's
    failure: str | None = None  # why no outcome is claimed (a worker did not do as planned)
    left: list[str] = field(default_factory=list)  # processes its run's code left, ended
    restart: str | None = None  # the restart its recovery came after (bench.restart.RESTARTS)
    finding: dict | None = None  # the default checker's complaint as a code and fields
    failed: dict | None = None  # the failure as a code and fields (replay.failed)
    said: dict | None = None  # what the point saved, as a code and fields (not a file's name)
    varies: bool = False  # two replays of its crash state gave two outcomes (async durability)

    def __post_init__(self) -> None:
        if self.failed:  # paths come back from JSON as lists: the same tuples as detected
            self.failed = {
                k: tuple(v) if isinstance(v, list) else v for k, v in self.failed.items()
            }

    @property
    def label(self) -> str:
        return NO_CRASH if self.n is None else f"{self.n}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Exploration:
    """Every crash point of one run of the reader's code and what a crash there leaves."""

    target: str
    kind: str
    folder: str
    points: list[PointResult] = field(default_factory=list)  # the run without a crash first
    crash_points: int = 0  # recorded in the run without a crash
    crash_states: int = 0  # distinct states among them: each explored once
    seconds: float = 0.0
    stopped: str | None = None  # why it ended before every state was explored
    stopped_by: dict | None = None  # the same as a code and fields (explorer.toml's [failed])
    unwatched: list[dict] = field(default_factory=list)  # writes it could not crash apart:
    # {"reason": a code of replay.UNWATCHED, "files": [...], "commits": a count or None}
    outside: list[str] = field(default_factory=list)  # files written outside the run folder
    spec: dict = field(default_factory=dict)  # how it was explored (replay.ExploreSpec)
    replaced: dict | None = None  # the reader's saver, explored on SQLite instead (savers.py):
    # {"saver": its class's name, "postgres": whether a server would have explored it as it is}
    clean: dict = field(default_factory=dict)  # the files as the run without a crash left them

    @property
    def failing(self) -> list[PointResult]:
        return [p for p in self.points if p.outcome != "consistent"]

    @property
    def green(self) -> bool:
        """Every crash point explored, every one consistent, no write left unseen, and none
        outside the run folder (its crashes cannot be explored: a failure, never green)."""
        return self.stopped is None and not self.failing and not self.unwatched and not self.outside

    def matrix(self) -> str:
        """The matrix as a terminal table, for a test's assertion message (`matrix_text`)."""
        return matrix_text(self)

    def point(self, n: int | None) -> PointResult:
        """The row of crash point `n` (None: the run without a crash)."""
        return next(p for p in self.points if p.n == n)

    def summary(self) -> str:
        """One line in the reader's language: points, states, what failed, why it stopped."""
        from labkit.language import say

        explored = sum(p.n is not None and p.same_as is None for p in self.points)
        head = say(
            "explorer.report.head",
            target=self.target,
            points=self.crash_points,
            states=self.crash_states,
            explored=explored,
            seconds=f"{self.seconds:.2f}",
        )
        verdict = (
            say("explorer.report.all_consistent")
            if not self.failing
            else say(
                "explorer.report.failing",
                count=len(self.failing),
                points=say("explorer.report.comma").join(
                    f"{point_label(p)} {point_outcome(p)}" for p in self.failing
                ),
            )
        )
        if replays_twice(self.spec):
            verdict += say("explorer.report.varied", count=sum(p.varies for p in self.points))
        unseen = say("explorer.report.semicolon").join(map(unwatched_words, self.unwatched))
        unseen = say("explorer.report.unseen", writes=unseen) if self.unwatched else ""
        why = failed_words(self.stopped_by) if self.stopped_by else self.stopped
        stopped = say("explorer.report.stopped", why=why) if self.stopped else ""
        files = [f for f in self.outside if not f.startswith(SERVICE)]
        services = [f for f in self.outside if f.startswith(SERVICE)]
        if files:
            unseen += say("explorer.report.outside", files=say("explorer.report.comma").join(files))
        if services:
            services_said = say("explorer.report.comma").join(services)
            unseen += say("explorer.report.network", services=services_said)
        if self.replaced:
            postgres = "_postgres" if self.replaced["postgres"] else ""
            unseen += say(f"explorer.report.on_sqlite{postgres}", saver=self.replaced["saver"])
        return say(
            "explorer.report.summary",
            head=head,
            verdict=verdict,
            unseen=unseen,
            left=left_running(self.points),
            stopped=stopped,
        )

    def to_json(self) -> dict:
        return {**asdict(self), "green": self.green}

    @classmethod
    def from_json(cls, data: dict) -> Exploration:
        fields = {k: v for k, v in data.items() if k != "green"}
        return cls(**{**fields, "points": [PointResult(**p) for p in data["points"]]})


def left_running(points: list[PointResult]) -> str:
    """What the reader's code left running in the runs (the lab ended each), or ""."""
    from labkit.language import say

    left = [name for p in points for name in p.left]
    if not left:
        return ""
    names = say("explorer.report.comma").join(dict.fromkeys(left))  # each once, as first seen
    one_or_many = "one" if len(left) == 1 else "many"
    return say(f"explorer.report.left_{one_or_many}", count=len(left), names=names)


def read_explored(folder: str | Path) -> list[PointResult]:
    """The rows an exploration wrote as it went (all of them, or those before it stopped)."""
    path = Path(folder) / EXPLORED_FILE
    if not path.exists():
        return []
    return [PointResult(**json.loads(line)) for line in path.read_text().splitlines() if line]


def point_label(point: PointResult) -> str:
    """A point's label as the reader reads it: its number, or "no crash" in their language."""
    from labkit.language import say

    return say("explorer.report.no_crash") if point.n is None else point.label


def outcome_word(outcome: str) -> str:
    """An outcome's word in the reader's language ("duplicate": 重复)."""
    from labkit.language import say

    return say(f"explorer.outcome.{outcome}")


def crash_after(point: PointResult) -> str:
    """What was made durable just before the point ("commit effect.db"), or, for the run
    without a crash, that it ran to its end."""
    from labkit.language import say

    if point.n is None:
        return say("explorer.report.run_to_end")
    return say("explorer.report.op_detail", verb=verb(point.op), detail=detail_words(point))


def replays_twice(spec: dict) -> bool:
    """Whether every crash state is replayed twice: a graph under durability "async" saves in
    a thread beside its nodes, so a replay killed at a point may die with more or less saved
    than the last one did, and its row may say otherwise on another run."""
    return spec.get("kind") == "graph" and spec.get("durability") == "async"


def point_outcome(point: PointResult) -> str:
    """A row's outcome in the reader's language, said to vary where two replays disagreed."""
    from labkit.language import say

    return outcome_word(point.outcome) + (say("explorer.report.varies") if point.varies else "")


def verb(op: str) -> str:
    """A crash point's operation ("commit", "put_writes") in the reader's language."""
    from labkit.language import say

    return say(f"explorer.verb.{op}")


def detail_words(point: PointResult) -> str:
    """What a point saved, in the reader's language: its code's words, or its files' names."""
    from labkit.language import say

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
    return point.failure or complaint_words(point.finding, point.complaint, point.outcome)


def failed_words(failed: dict, what: str = "") -> str:
    """Why no outcome is claimed (or why the exploration stopped), in the reader's language;
    `what` is the crash point's operation, for a process that did not die there."""
    from labkit.language import say

    comma = say("explorer.report.comma")
    fields = {
        k: comma.join(v) if isinstance(v, (list, tuple)) else v  # paths, joined only here
        for k, v in failed.items()
        if k != "code"
    }
    return say(f"explorer.failed.{failed['code']}", what=what, **fields)


def complaint_words(finding: dict | None, complaint: str | None, outcome: str) -> str:
    """What the checker said, without the outcome's word: the default checker's finding in the
    reader's language, a reader's own line as they wrote it."""
    from labkit.language import say

    if finding is None:
        return (complaint or "").removeprefix(f"{outcome}: ")
    fields = dict(finding)
    if fields.get("table"):
        fields["what"] = say("explorer.finding.table", file=fields["file"], table=fields["table"])
    elif fields.get("file"):
        fields["what"] = fields["file"]
    return say(f"explorer.finding.{fields.pop('code')}", **fields)


def unwatched_words(entry: dict) -> str:
    """Why some writes could not be crashed apart, in the reader's language."""
    from labkit.language import say

    files = say("explorer.detail.together").join(entry["files"])
    return say(f"explorer.unwatched.{entry['reason']}", files=files, commits=entry.get("commits"))


def recovered_when(point: PointResult) -> str:
    """For a failing crash point, the restart whose recovery showed it ("recovered in the
    next month"); "" for a consistent one, which every restart found consistent."""
    from labkit.language import say

    if point.n is None or point.restart is None or point.outcome == "consistent":
        return ""
    return say("explorer.report.recovered", when=say(f"explorer.restart.{point.restart}"))


def run_folder(point: PointResult) -> str:
    """Where the point's run is, or which point's run shows the same crash state."""
    from labkit.language import say

    if point.same_as:
        return say("explorer.report.same_state", n=point.same_as)
    return point.run_dir or ""


def matrix_text(exploration: Exploration) -> str:
    """The matrix as a terminal table: point, operation, source line, outcome, run folder."""
    from labkit.language import display_width, padded, say

    names = ("point", "crash_after", "source", "outcome", "wrong_folder")
    rows = [tuple(say(f"explorer.report.{name}") for name in names)]
    for p in exploration.points:
        wrong = " · ".join(filter(None, [recovered_when(p), what_is_wrong(p), run_folder(p)]))
        rows.append((point_label(p), crash_after(p), p.where or "", point_outcome(p), wrong))
    widths = [min(max(display_width(r[i]) for r in rows), 48) for i in range(4)]
    lines = [
        "  ".join(padded(cell, width) for cell, width in zip(r[:4], widths, strict=True))
        + "  "
        + r[4]
        for r in rows
    ]
    return "\n".join([*lines, exploration.summary()])
