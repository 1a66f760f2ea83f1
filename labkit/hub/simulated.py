"""A simulated participant: logged in through the hub's REST API, their server started, then
lessons run cell by cell in their own kernel, each lesson's outcomes checked against what the
lesson teaches (benchmarks/bench_workshop.py runs a room of them at once).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.hub.client import Participant
from labkit.hub.kernel import RemoteKernel
from labkit.hub.usage import cpu_seconds, pids_by_uid

LESSONS = Path(__file__).resolve().parents[2] / "notebooks"
FILES = {1: "01_the_commit_window", 5: "05_the_unknown_outcome", 7: "07_real_postgres"}

# What each lesson's runs must have found, read from the notebook's own variables after its
# cells ran: the outcomes the lesson teaches, as a participant's kernel computed them.
CHECKS = {
    1: """{
        "effect_first@effect": repeated.outcome,
        "checkpoint_first@checkpoint": lost.outcome,
        "checkpoint_first@checkpoint, SIGKILL": lost_by_signal.outcome,
        "finally ran": {w: "in finally" in s["log_lines"] for w, s in exits.items()},
        "queue_pop@popped": popped.outcome,
        "queue_claim@popped": claimed.outcome,
    }""",
    5: """{
        "reply_lost": {r.spec.strategy: [len(r.tickets), r.outcome] for r in side_by_side},
        "service_killed, same_key": [len(service_killed.tickets), service_killed.outcome],
        "outbox plain: deliveries, effects":
            [plain.deliveries, plain.summary()["after"]["effects"]],
        "outbox dedupe: effects": dedupe.summary()["after"]["effects"],
    }""",
    7: """{
        "window": {f"{r.spec.order}@{r.spec.kill_at}": r.outcome for r in sweep},
        "race receipts": {r.spec.lock: r.receipts for r in races},
        "in flight survived": {r.spec.point: r.in_flight_survived for r in crashes},
    }""",
}


def code_cells(lesson: int) -> list[str]:
    notebook = json.loads((LESSONS / f"{FILES[lesson]}.ipynb").read_text())
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@dataclass
class LessonRun:
    lesson: int
    cell_seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    found: dict = field(default_factory=dict)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    def quantile(self, q: float) -> float:
        cells = sorted(self.cell_seconds)
        if len(cells) < 2:
            return cells[0] if cells else 0.0
        return statistics.quantiles(cells, n=100, method="inclusive")[round(q * 100) - 1]


def run_lesson(kernel: RemoteKernel, uid: int, lesson: int) -> LessonRun:
    """Every code cell of the lesson in order (a reader's run), then its checks."""
    done = LessonRun(lesson)
    before = cpu_seconds(pids_by_uid({uid})[uid])
    for source in code_cells(lesson):
        ran = kernel.run(source)
        done.cell_seconds.append(ran.seconds)
        if ran.error:
            done.errors.append(f"{source.splitlines()[0][:60]!r}: {ran.error}")
    checked = kernel.run(f"import json\nprint(json.dumps({CHECKS[lesson]}))")
    if checked.error:
        done.errors.append(f"checks: {checked.error}")
    else:
        done.found = json.loads(checked.text.strip().splitlines()[-1])
    done.cpu_seconds = cpu_seconds(pids_by_uid({uid})[uid]) - before
    done.wall_seconds = sum(done.cell_seconds)
    return done


def attend(person: Participant, uid: int, lessons: list[int]) -> tuple[RemoteKernel, list]:
    """One participant's workshop: a kernel in their server, the lessons run in it (in the
    lessons' folder of their home, as JupyterLab opens them). The kernel stays open."""
    kernel = RemoteKernel(person.server_url, person.token)
    there = kernel.run("import os\nos.chdir(os.path.expanduser('~/notebooks'))")
    if there.error:
        kernel.close()
        raise refusal("hub_no_lessons", name=person.name, error=there.error)
    return kernel, [run_lesson(kernel, uid, lesson) for lesson in lessons]
