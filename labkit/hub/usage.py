"""What a participant's processes cost, read from /proc by user: memory as PSS (a page shared
by k processes counts 1/k to each, so a room's figures add up to the machine's), and CPU.

Every process a participant starts (their Jupyter server, kernels, the trial server and its
spares, the ticket service, lesson 7's Postgres) runs as their own user, so their uid is
exactly "everything they started".
"""

from __future__ import annotations

import os
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def pids_by_uid(uids: set[int]) -> dict[int, list[int]]:
    """{uid: [pid, ...]} of the processes running as each of `uids` now."""
    found: dict[int, list[int]] = {uid: [] for uid in uids}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
            except OSError:
                continue
            if uid in found:
                found[uid].append(int(entry.name))
    return found


def owner(pid: int) -> int | None:
    """The uid a process runs as (None once it has gone)."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def process_tree(pid: int) -> list[int]:
    """pid and every process below it."""
    parents = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    parents[int(entry.name)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, frontier = [pid], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def pss_kb(pid: int) -> int:
    """The process's proportional set size in KiB (0 once it has gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


PARTS = ("server", "kernel", "postgres", "lab workers")


def part(pid: int) -> str:
    """Which of PARTS a participant's process is: their Jupyter server, a kernel, lesson 7's
    Postgres, or the lab's own workers (trial server, spares, ticket service, crash workers)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().decode(errors="replace")
    except OSError:
        return PARTS[3]
    if "jupyterhub-singleuser" in words or "lean_server" in words:
        return PARTS[0]
    if "ipykernel" in words or "lean_kernel" in words:
        return PARTS[1]
    return PARTS[2] if "postgres" in words.split("\0")[0] else PARTS[3]


def label(pid: int) -> str:
    """A short name for the process: its program and first arguments (for the report)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().decode(errors="replace").split("\0")
    except OSError:
        return "gone"
    return " ".join(w.rsplit("/", 1)[-1] for w in words[:3] if w)[:60]


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU of these processes, with that of the children they reaped."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return total / TICKS


class Peaks(threading.Thread):
    """Samples every `every` seconds, until stop(): each uid's peak PSS (MiB, all its
    processes at one moment) and peak number of processes; the peaks of `others`."""

    def __init__(self, uids: list[int], every: float = 1.0, others: dict | None = None) -> None:
        super().__init__(daemon=True)
        self.others = others or {}  # name: a function that lists its pids now (the room's own)
        self.others_mb = dict.fromkeys(self.others, 0.0)
        self.uids, self.every = set(uids), every
        self.pss_mb = dict.fromkeys(self.uids, 0.0)
        self.processes = dict.fromkeys(self.uids, 0)
        self.parts: dict[int, dict[str, float]] = {uid: {} for uid in self.uids}  # at the peak
        self.biggest: dict[int, list] = {uid: [] for uid in self.uids}  # [MB, process] at it
        self.room_mb = 0.0  # all participants at one moment: what the machine must hold
        self.done = threading.Event()

    def sample(self) -> None:
        room = 0.0
        for uid, pids in pids_by_uid(self.uids).items():
            sizes = {pid: pss_kb(pid) / 1024 for pid in pids}
            total = sum(sizes.values())
            room += total
            if total > self.pss_mb[uid]:
                self.pss_mb[uid] = total
                parts = dict.fromkeys(PARTS, 0.0)
                for pid, size in sizes.items():
                    parts[part(pid)] += size
                self.parts[uid] = {k: round(v, 1) for k, v in parts.items()}
                top = sorted(sizes.items(), key=lambda item: -item[1])[:8]
                self.biggest[uid] = [[round(mb, 1), label(pid)] for pid, mb in top]
            self.processes[uid] = max(self.processes[uid], len(pids))
        self.room_mb = max(self.room_mb, room)
        for name, pids_now in self.others.items():
            self.others_mb[name] = max(self.others_mb[name], sum(map(pss_kb, pids_now())) / 1024)

    def run(self) -> None:
        while not self.done.is_set():
            started = time.monotonic()
            self.sample()
            self.done.wait(max(0.0, self.every - (time.monotonic() - started)))

    def stop(self) -> None:
        self.done.set()
        self.join()
