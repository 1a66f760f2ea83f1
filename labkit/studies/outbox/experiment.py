"""Lesson 5, the outbox: a message committed with the business row, delivered at least once.

A run: the producer commits an order and its outbox row in one transaction; the relay delivers
the message to a consumer process and then marks it sent; one process dies at the kill point
(SIGKILL, from its parent); a fresh relay recovers. The files say what happened: how often the
effect took place at the consumer, for a `plain` consumer and one that deduplicates with its
inbox (`dedupe`). Each is a process of its own: the producer and the relays forked from a
server that imported them once, the consumers fresh interpreters that the relay starts. The
run keeps everything in its folder (the files, the trace, each process's output, before.json,
after.json, results.json).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from labkit.bench.errors import (
    MAX_TIMEOUT,
    check_bool,
    check_choice,
    check_folder,
    check_function,
    check_instance,
    check_int,
    check_number,
    refusal,
)
from labkit.bench.failures import FAILED, failing_run, first_failure
from labkit.bench.folders import holds_run_dirs, keep_json, new_run_dir
from labkit.bench.launcher import WorkerProcess, WorkerReport, read_report
from labkit.bench.snapshot import Snapshot, take_snapshot
from labkit.bench.trace import Trace, read_trace
from labkit.language import Messages
from labkit.studies.outbox.outcome import OUTBOX_OUTCOMES, outbox_counts, outbox_state_word
from labkit.studies.outbox.stores import FILES, create_files

__all__ = [
    "CONSUMERS",
    "OUTBOX_KILL_POINTS",
    "OUTBOX_OUTCOMES",
    "OutboxResult",
    "OutboxSpec",
    "consumer_role",
    "execute_outbox",
    "outbox_counts",
    "outbox_state_word",
    "outbox_sweep",
    "run_outbox",
]

# The consumers, the kill points and the outcome words: codes, each with its meaning in the
# reader's language (outbox.toml).
CONSUMERS = Messages("outbox.consumers", ("plain", "dedupe"))
# Every kill point, in the order a run passes them, and which process dies there.
DIES = {
    "none": "nobody",
    "in_transaction": "producer",
    "committed": "producer",
    "before_deliver": "relay",
    "consumer_committed": "consumer",
    "after_deliver": "relay",
    "after_mark": "relay",
}


class KillPoints(Messages):
    """Each kill point: (the process that dies there, what has happened when it does)."""

    def __getitem__(self, point: str) -> tuple[str, str]:  # type: ignore[override]
        return DIES[point], super().__getitem__(point)


OUTBOX_KILL_POINTS = KillPoints("outbox.kill_points", DIES)
STAGES = ("producer", "relay", "recovery")  # the processes the runner starts, in turn
ENTRIES = {
    "producer": "labkit.studies.outbox.producer:produce",
    "relay": "labkit.studies.outbox.relay:relay",
    "recovery": "labkit.studies.outbox.relay:relay",
}
MAX_ORDERS = 5
YOURS = "yours"  # the consumer is a reader's function (an exercise)
# A reader's consumer has a kill point after each commit to a SQLite file of the run folder,
# the lab's own COMMIT of the delivery included, "after commit 2 (consumer.db)", and after each
# write to another file of it, "after write 1 (processed.json)" (`explorer.readers_writes`).
CONSUMER_POINT = re.compile(r"after (commit|write) \d+ \(.+\)")


def consumer_role(delivery: int) -> str:
    """The role of the consumer process of the first relay's `delivery`-th delivery."""
    return f"relay-consumer-{delivery}"


@dataclass(frozen=True)
class OutboxSpec:
    """One outbox run. Invalid values raise LabError naming the valid choices."""

    consumer: str = "plain"
    kill_at: str = "none"
    out: Path | None = None  # a folder that must not exist yet; None: a new one in the runs home
    timeout: float = 10.0  # seconds each process may take before its parent kills it
    orders: int = 1  # business operations the producer commits, each with its own message
    consumer_source: str | None = None  # a reader's consumer (exercises): consumer "yours"
    consumer_name: str = "consume"  # the function in consumer_source
    one_payload: bool = False  # every message carries the same payload: orders for one thing
    killed_delivery: int = 1  # whose consumer dies at a reader's commit: the n-th delivery's

    def __post_init__(self) -> None:
        check_choice("consumer", self.consumer, (*CONSUMERS, YOURS))
        if (self.consumer == YOURS) != (self.consumer_source is not None):
            raise refusal("custom_consumer", value=repr(YOURS))
        check_instance("consumer_source", self.consumer_source, str | None, "source_or_none")
        if not self.after_readers_write:
            check_choice("kill point", self.kill_at, OUTBOX_KILL_POINTS)
        check_folder("out", self.out)
        check_number("timeout", self.timeout, 0, MAX_TIMEOUT)
        check_int("orders", self.orders, 1, MAX_ORDERS)
        check_bool("one_payload", self.one_payload)
        check_int("killed_delivery", self.killed_delivery, 1, self.orders)

    @property
    def after_readers_write(self) -> bool:
        """The kill point is after a commit or a write of a reader's consumer."""
        return self.consumer == YOURS and bool(CONSUMER_POINT.fullmatch(str(self.kill_at)))

    @property
    def dies(self) -> str:
        """The process that dies at the kill point (producer, relay, consumer, nobody)."""
        return "consumer" if self.after_readers_write else DIES[self.kill_at]

    @property
    def label(self) -> str:
        return f"{self.consumer}.{self.kill_at}"

    def kill_for(self, role: str) -> str | None:
        """The kill point if the process of `role` is the one planned to die there: the
        producer, the first relay (never the recovering one), or the consumer of the first
        relay's `killed_delivery`-th delivery."""
        victim = consumer_role(self.killed_delivery) if self.dies == "consumer" else self.dies
        return self.kill_at if role == victim else None

    def job(self, stage: str) -> dict:
        consumer_kill = self.kill_at if stage == "relay" and self.dies == "consumer" else None
        return {
            "dedupe": self.consumer == "dedupe",
            "consumer_kill_at": consumer_kill,
            "killed_delivery": self.killed_delivery,
            "timeout": self.timeout,
            "orders": self.orders,
            "one_payload": self.one_payload,
            **(
                {"source": self.consumer_source, "name": self.consumer_name}
                if self.consumer_source
                else {}
            ),
        }


def snapshot_json(snapshot: Snapshot) -> dict:
    """The counts and every table's columns and rows (Snapshot.to_json counts study 000's)."""
    return {**outbox_counts(snapshot), **asdict(snapshot)}


@dataclass
class OutboxResult:
    spec: OutboxSpec
    run_dir: Path
    workers: dict[str, WorkerReport]  # every process, in the order it started
    before: Snapshot  # after the kill, before the recovering relay
    after: Snapshot
    deliveries: int  # how many times a relay handed the message to a consumer
    outcome: str
    failure: dict | None = None
    killed: str | None = None  # the role of the process that died at the point

    def summary(self) -> dict:
        return {
            "consumer": self.spec.consumer,
            "kill_at": self.spec.kill_at,
            "killed": self.killed,
            "before": outbox_counts(self.before),
            "after": outbox_counts(self.after),
            "deliveries": self.deliveries,
            "exits": {role: w.exit_code for role, w in self.workers.items()},
            "outcome": self.outcome,
            "failure": self.failure,
            "run_dir": str(self.run_dir),
        }

    def to_json(self) -> dict:
        return {
            **self.summary(),
            "workers": {role: w.to_json() for role, w in self.workers.items()},
            "snapshots": {"before": snapshot_json(self.before), "after": snapshot_json(self.after)},
        }

    def trace(self) -> list[dict]:
        """Every event of every process of the run, as they were written."""
        return read_trace(self.run_dir)


def prepare_outbox(spec: OutboxSpec) -> Path:
    """A new run folder with both files empty, and the trace's first event."""
    run_dir = new_run_dir(spec.out, prefix="outbox-")
    with failing_run(run_dir):
        create_files(run_dir)
        trace = Trace(run_dir, "setup")
        trace.event("created", rows=take_snapshot(run_dir, FILES).rows)
        trace.close()
    return run_dir


def stage_worker(spec: OutboxSpec, run_dir: Path, stage: str, **plan: object) -> WorkerProcess:
    """The process of one stage: the producer, the relay, or the recovering relay."""
    entry = ENTRIES[stage]
    job = spec.job(stage)
    return WorkerProcess(
        run_dir, stage, entry, job, timeout=spec.timeout, start_mode="served", **plan
    )


def run_stage(spec: OutboxSpec, run_dir: Path, stage: str) -> WorkerReport:
    """Run one stage to its end, or to its planned kill point, where its parent SIGKILLs it."""
    kill_at = spec.kill_for(stage)
    with stage_worker(spec, run_dir, stage, pause_at=(kill_at,) if kill_at else ()) as worker:
        worker.finish(kill_at=kill_at)
    return worker.report()


def with_consumers(run_dir: Path, stages: dict[str, WorkerReport]) -> dict[str, WorkerReport]:
    """Every process in the order it started: each relay followed by the consumers it started,
    as it saw them (a killed relay left no word of them; they had answered, or it would not
    have reached its kill point)."""
    workers = {}
    for role, report in stages.items():
        workers[role] = report
        for seen in read_report(run_dir, role).get("deliveries", []):
            fields = {k: v for k, v in seen.items() if k != "applied"}
            workers[fields["role"]] = WorkerReport(**fields)
    return workers


def conclude(spec: OutboxSpec, run_dir: Path, first: dict[str, WorkerReport]) -> OutboxResult:
    """After the kill: snapshot, recover with a fresh relay, snapshot, classify, save."""
    with failing_run(run_dir):
        before = take_snapshot(run_dir, FILES)
        first["recovery"] = run_stage(spec, run_dir, "recovery")
        after = take_snapshot(run_dir, FILES)
        workers = with_consumers(run_dir, first)
        failure = first_failure((report, spec.kill_for(role)) for role, report in workers.items())
        killed = next((r for r, w in workers.items() if w.killed_at == spec.kill_at), None)
        events = read_trace(run_dir)
        result = OutboxResult(
            spec,
            run_dir,
            workers,
            before,
            after,
            deliveries=sum(e["event"] == "deliver" for e in events),
            outcome=FAILED if failure else outbox_state_word(after),
            failure=failure,
            killed=killed,
        )
        keep_json(
            run_dir,
            before=snapshot_json(before),
            after=snapshot_json(after),
            results=result.to_json(),
        )
    return result


@holds_run_dirs
def execute_outbox(spec: OutboxSpec) -> OutboxResult:
    """Producer, relay (one of them killed at the spec's point), recovery: the files read back."""
    check_instance("spec", spec, OutboxSpec, "outbox_spec")
    run_dir = prepare_outbox(spec)
    with failing_run(run_dir):
        first = {stage: run_stage(spec, run_dir, stage) for stage in STAGES[:2]}
    return conclude(spec, run_dir, first)


def run_outbox(
    consumer: str = "plain",
    kill_at: str = "none",
    out: Path | str | None = None,
    timeout: float = 10.0,
) -> OutboxResult:
    """Kill one process at `kill_at`, recover with a fresh relay, classify what the consumer did:
    run_outbox("plain", "after_deliver") → duplicate; run_outbox("dedupe", ...) → consistent."""
    return execute_outbox(OutboxSpec(consumer, kill_at, check_folder("out", out), timeout))


Progress = Callable[[int, int, OutboxResult], None]


@holds_run_dirs
def outbox_sweep(
    out: Path | str | None = None, progress: Progress | None = None
) -> list[OutboxResult]:
    """Every kill point for both consumers, one run each in a folder of its own under one
    sweep folder (`plain.after_deliver`, ...); `progress(done, total, result)` after each."""
    check_function("progress", progress)
    specs = [(c, p) for c in CONSUMERS for p in OUTBOX_KILL_POINTS]
    longest = max((OutboxSpec(c, p).label for c, p in specs), key=len)
    root = new_run_dir(check_folder("out", out), prefix="outbox-sweep-", deepest=longest)
    results = []
    for consumer, point in specs:
        spec = OutboxSpec(consumer, point)
        results.append(execute_outbox(OutboxSpec(consumer, point, root / spec.label)))
        if progress:
            progress(len(results), len(specs), results[-1])
    return results
