"""A workshop of N simulated participants on one real JupyterHub (issue 30): what each costs.

Each participant is a system user of their own (made for the run, removed after): logged in
through the hub's REST API with the workshop password, their server started, then lessons 1,
5 and 7 run cell by cell in their own kernel, all participants at once; each lesson's outcomes
are checked against what it teaches. Then each participant holds lesson 5's ticket service
and lesson 7's Postgres open while the next one tries every door of theirs. Prints, per
participant: peak PSS of everything they started (their server, kernel, trial server, spares,
ticket service, Postgres: all their uid's processes, sampled each second), CPU seconds per
lesson, p50/p95 of a cell's start to its verdict, the checks, the doors.

    sudo .venv/bin/python benchmarks/bench_workshop.py --participants 5
    sudo .venv/bin/python benchmarks/bench_workshop.py --participants 2 --lessons 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from labkit.bench.errors import refusal
from labkit.hub import participants, passwords
from labkit.hub.client import Participant
from labkit.hub.room_postgres import RoomPostgres
from labkit.hub.settings import Settings, free_ports
from labkit.hub.simulated import FILES, attend
from labkit.hub.start import start, stop
from labkit.hub.usage import PARTS, Peaks, owner, process_tree, pss_kb

# What each lesson's checks must find (labkit/hub/simulated.py's CHECKS): the lessons' own
# claims. effect_first killed at effect recovers to 2 receipts, checkpoint_first to none, ...
EXPECTED = {
    1: {
        "effect_first@effect": "duplicate",
        "checkpoint_first@checkpoint": "lost",
        "checkpoint_first@checkpoint, SIGKILL": "lost",
        "finally ran": {"os._exit": False, "sys.exit": True},
        "queue_pop@popped": "lost",
        "queue_claim@popped": "consistent",
    },
    5: {
        "reply_lost": {
            "new_key": [2, "duplicate"],
            "same_key": [1, "unknown-resolved"],
            "reconcile": [1, "unknown-resolved"],
            "give_up": [1, "orphan"],
        },
        "service_killed, same_key": [1, "unknown-resolved"],
        "outbox plain: deliveries, effects": [2, 2],
        "outbox dedupe: effects": 1,
    },
    7: {
        "window": {
            "effect_first@effect": "duplicate",
            "effect_first@checkpoint": "consistent",
            "checkpoint_first@checkpoint": "lost",
            "checkpoint_first@effect": "consistent",
            "one_transaction@locked": "consistent",
            "one_transaction@in_transaction": "consistent",
            "one_transaction@committed": "consistent",
        },
        "race receipts": {"none": 2, "for_update": 1, "serializable": 1},
        "in flight survived": {
            "before_commit": False,
            "commit_in_flight": False,
            "commit_flushed": True,
            "after_commit": True,
        },
    },
}


def hub_processes(pid: int, participants_uids: list[int]) -> list[int]:
    """The hub (pid) and the processes below it that are not a participant's: its proxy, its
    culler."""
    return [p for p in process_tree(pid) if owner(p) not in participants_uids]


def cross_check(kernels: list) -> list[dict]:
    """Each participant holds their doors open; the next one tries them all."""
    if len(kernels) < 2:
        return []
    hold = "from labkit.hub import probe\nprint(probe.hold())"
    with ThreadPoolExecutor(len(kernels)) as pool:
        held = [k.text.strip().splitlines()[-1] for k in pool.map(lambda k: k.run(hold), kernels)]
        tries = [
            f"from labkit.hub import probe\nprint(probe.reach({held[i - 1]!r}))"
            for i in range(len(kernels))
        ]
        ran = list(pool.map(lambda pair: pair[0].run(pair[1]), zip(kernels, tries, strict=True)))
        list(pool.map(lambda k: k.run("probe.release()"), kernels))
    return [json.loads(r.text.strip().splitlines()[-1]) if not r.error else {"error": r.error}
            for r in ran]  # fmt: skip


def settings_room_folder(folder: Path) -> Path:
    return Settings(folder, (), "").room_folder


def workshop(count: int, lessons: list[int], room_postgres: bool = False) -> dict:
    prefix = f"bench{os.getpid() % 100000}-"
    names = participants.names(count, prefix)
    folder = Path(tempfile.mkdtemp(prefix="labkit-hub-bench-"))
    hub = kernels = room = None
    try:
        participants.create(names)
        uids = [pwd.getpwnam(n).pw_uid for n in names]
        urls, others = {}, {}
        if room_postgres:
            room = RoomPostgres(free_ports(1)[0]).start()
            urls = {name: room.admit(name) for name in names}
            others["room postgres"] = lambda: process_tree(room.pid) if room.pid else []
        settings = Settings(
            folder, tuple(names), participants.instructor(prefix), *free_ports(4),
            postgres_urls=urls,
        )  # fmt: skip
        hub = start(settings)
        people = [Participant(settings.url, n) for n in names]
        password = passwords.participants_password(folder)
        peaks = Peaks(uids, others=others)
        peaks.start()
        began = time.monotonic()
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(lambda p: p.log_in(password), people))
            started = list(pool.map(lambda p: p.start_server(), people))
            ran = list(pool.map(lambda pu: attend(*pu, lessons), zip(people, uids, strict=True)))
        lessons_seconds = time.monotonic() - began
        peaks.stop()  # the lessons' peaks: the cross-check below starts more (probe.hold)
        kernels = [kernel for kernel, _ in ran]
        doors = cross_check(kernels)
        hub_mb = sum(map(pss_kb, hub_processes(hub.pid, uids))) / 1024
        return {
            "participants": count, "lessons": lessons, "cores": os.cpu_count(),
            "wall_seconds": round(lessons_seconds, 1), "hub_pss_mb": round(hub_mb, 1),
            "room_peak_pss_mb": round(peaks.room_mb, 1),
            "room_postgres_pss_mb": round(peaks.others_mb.get("room postgres", 0), 1)
            if room_postgres else None,
            "each": [
                {
                    "name": person.name, "server_start_s": round(start_s, 1),
                    "peak_pss_mb": round(peaks.pss_mb[uid], 1),
                    "peak_processes": peaks.processes[uid],
                    "at_peak_mb": peaks.parts[uid],
                    "at_peak_biggest": peaks.biggest[uid],
                    "lessons": {
                        str(r.lesson): {
                            "cpu_s": round(r.cpu_seconds, 1), "wall_s": round(r.wall_seconds, 1),
                            "p50_s": round(r.quantile(0.5), 2), "p95_s": round(r.quantile(0.95), 2),
                            "errors": r.errors, "found": r.found,
                            "right": not r.errors and r.found == EXPECTED[r.lesson],
                        }
                        for r in runs
                    },
                    "doors": doors[i] if doors else {},
                }
                for i, (person, uid, start_s, (_, runs)) in enumerate(
                    zip(people, uids, started, ran, strict=True)
                )
            ],
        }  # fmt: skip
    finally:
        for kernel in kernels or []:
            kernel.close()
        if hub is not None:
            stop(hub)
        if room is not None:
            room.stop()
        participants.remove(names)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(settings_room_folder(folder), ignore_errors=True)


def report(result: dict) -> str:
    lessons = [str(n) for n in result["lessons"]]
    head = ["participant", "peak PSS MB", "procs", "start s"]
    head += [f"L{n} cpu s · p50/p95 s · right" for n in lessons] + ["doors refused"]
    lines = [" | ".join(head)]
    for p in result["each"]:
        cells = [p["name"], f"{p['peak_pss_mb']:.0f}", str(p["peak_processes"]),
                 f"{p['server_start_s']:.1f}"]  # fmt: skip
        for n in lessons:
            r = p["lessons"][n]
            cells.append(f"{r['cpu_s']:.1f} · {r['p50_s']:.2f}/{r['p95_s']:.2f} · {r['right']}")
        doors = p["doors"]
        refused = sum(v != "reached" for v in doors.values())
        cells.append(f"{refused}/{len(doors)}" if doors else "-")
        lines.append(" | ".join(cells))
    peaks = [p["peak_pss_mb"] for p in result["each"]]
    lines.append(
        f"{result['participants']} participants, lessons {', '.join(lessons)}, "
        f"{result['wall_seconds']:.0f} s; peak PSS per participant max {max(peaks):.0f} MB, "
        f"all at one moment {result.get('room_peak_pss_mb', 0):.0f} MB; the hub, proxy and"
        f" culler {result['hub_pss_mb']:.0f} MB"
        + (
            f"; the room's Postgres {result['room_postgres_pss_mb']:.0f} MB"
            if result.get("room_postgres_pss_mb") is not None
            else ""
        )  # fmt: skip
    )
    parts = {k: max(p["at_peak_mb"].get(k, 0) for p in result["each"]) for k in PARTS}
    lines.append("at a participant's peak, at most: " + ", ".join(
        f"{k} {v:.0f} MB" for k, v in parts.items()))  # fmt: skip
    for p in result["each"]:
        for n, r in p["lessons"].items():
            if not r["right"]:
                lines.append(f"WRONG {p['name']} lesson {n}: {r['errors']} found {r['found']}")
        if any(v == "reached" for v in p["doors"].values()):
            lines.append(f"REACHED by {p['name']}: {p['doors']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=2, metavar="N")
    parser.add_argument("--lessons", default="1,5,7", help="of 1, 5, 7 (default all three)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures here")
    parser.add_argument("--room-postgres", action="store_true",
                        help="one Postgres for the room (a role and database each)")  # fmt: skip
    options = parser.parse_args()
    lessons = [int(n) for n in options.lessons.split(",") if n.strip().isdigit()]
    if not lessons or set(lessons) - set(FILES) or ",".join(map(str, lessons)) != options.lessons:
        parser.error(f"--lessons must be some of 1,5,7 (comma-separated), not {options.lessons!r}")
    if not 1 <= options.participants <= participants.MAX_PARTICIPANTS:
        parser.error(f"--participants must be 1 to {participants.MAX_PARTICIPANTS}")
    if os.geteuid() != 0:
        sys.exit(f"bench_workshop: {refusal('hub_needs_root')}")
    result = workshop(options.participants, lessons, options.room_postgres)
    print(report(result))
    if options.json:
        Path(options.json).write_text(json.dumps(result, indent=1))
    wrong = any(not r["right"] for p in result["each"] for r in p["lessons"].values())
    reached = any(v == "reached" for p in result["each"] for v in p["doors"].values())
    sys.exit(1 if wrong or reached else 0)


if __name__ == "__main__":
    main()
