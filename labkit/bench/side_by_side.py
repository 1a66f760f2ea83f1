"""Several runs side by side in one thread: each run a generator that yields the worker it waits
for, and is sent back where that worker stopped.

A kill-and-recover trial spends most of its time waiting: for a worker to reach its point, for
an fsync, for a process to be torn down. On two cores, two trials at once finish a matrix in
little more than half the time. No thread is started (the trial server forks its workers, and
a fork copies only the forking thread): one loop listens to every running worker's pipes
(`launcher.listen`) and moves on whichever run has news.

A run's protocol: `point = yield worker` gives `point`, the name of the point the worker stopped
at (the run then kills it or lets it go on, and yields again), or None once it has ended (or
was killed at its timeout): the run then reaps it with `worker.wait()`. What the generator
returns is the run's result.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator

from labkit.bench.launcher import WorkerProcess, listen

__all__ = ["Run", "side_by_side", "until_ended"]

Run = Generator[WorkerProcess, str | None, object]


def side_by_side(runs: Iterable[Run], lanes: int) -> Iterator[tuple[int, object]]:
    """Drive `runs`, at most `lanes` at a time, in the order given; yield (index, result) as each
    ends. However this ends (an error, a Ctrl-C), every run started is closed, which reaps its
    workers (`with WorkerProcess(...)` inside the run)."""
    waiting = enumerate(runs)
    running: dict[WorkerProcess, tuple[int, Run]] = {}
    finished: list[tuple[int, object]] = []

    def advance(index: int, run: Run, said: str | None, first: bool = False) -> None:
        try:
            worker = next(run) if first else run.send(said)
        except StopIteration as ended:
            finished.append((index, ended.value))
        else:
            running[worker] = (index, run)

    try:
        while True:
            while len(running) < lanes and (new := next(waiting, None)) is not None:
                advance(*new, None, first=True)
            yield from finished
            finished.clear()
            if not running:
                return
            ready = listen(list(running), min(w._time_left() for w in running))
            for worker in list(running):
                heard = worker._heard(ready)
                if heard is None and worker._time_left() > 0:
                    continue
                if heard is None:  # past its timeout: killed, and told as ended
                    worker.timed_out = True
                    worker.kill()
                said = (heard.decode().strip() or None) if heard else None
                worker.paused_at = said
                advance(*running.pop(worker), said)
    finally:
        for _, run in running.values():
            run.close()


def until_ended(worker: WorkerProcess) -> Run:
    """A run's part that lets `worker` run to its end (a pause nobody planned for goes on) and
    reaps it: `yield from until_ended(worker)`."""
    while (yield worker) is not None:
        worker.resume()
    worker.wait()
