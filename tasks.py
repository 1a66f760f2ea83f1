"""Set up the lab and run it, or run its tests. Needs only Python 3.11+ on Linux or macOS.

    python3 tasks.py lab     # set up .venv, then JupyterLab on notebooks/00_start_here.ipynb
    python3 tasks.py test    # set up what is missing, then the whole test suite
    python3 tasks.py binder  # write Binder's part of environment.yml and the README's links
    python3 tasks.py mutate [module ...]  # mutation testing of what a reader cannot check
    python3 tasks.py hub --participants N  # as root: a JupyterHub for a workshop (labkit/hub/)

The packages and their pins come from environment.yml, the one source of the environment
(Binder builds the same file with conda). The set-up is skipped when nothing has changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
SUPPORTED = "Commit Window Lab runs on Linux and macOS"
ON_WINDOWS = (
    f"{SUPPORTED}; on Windows, run it in WSL 2: in PowerShell "
    "`wsl --install` (then restart), open Ubuntu, `sudo apt install python3-venv git`, clone "
    "the repository there and run `python3 tasks.py lab`. Or open the lessons on Binder (the "
    "links in README.md), with nothing to install."
)
# The GitHub repository (owner/name) whose Binder links the README gives: the one place to
# change in a fork, then run `python3 tasks.py binder`.
BINDER_REPOSITORY = "commit-window-lab/commit-window-lab"
BINDER_LINK = re.compile(r"https://mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/")
DEVELOPMENT = "      # --- development"  # environment.yml's line where Binder's part ends
PIN = re.compile(r"^\s+- ([A-Za-z0-9_.\-\[\]]+==[^\s#]+)", re.MULTILINE)


def pinned_packages() -> list[str]:
    """Every `name==version` line of environment.yml's pip section."""
    return PIN.findall((ROOT / "environment.yml").read_text())


def lessons_environment() -> str:
    """environment.yml down to its development line: what Binder builds, and all it builds."""
    text = (ROOT / "environment.yml").read_text()
    return text[: text.index(DEVELOPMENT)]


def binder(extra: list[str]) -> None:
    """Write binder/environment.yml and point every Binder link of the README at
    BINDER_REPOSITORY."""
    (ROOT / "binder" / "environment.yml").write_text(lessons_environment())
    readme = ROOT / "README.md"
    links = f"https://mybinder.org/v2/gh/{BINDER_REPOSITORY}/"
    readme.write_text(BINDER_LINK.sub(links, readme.read_text()))


def set_up() -> None:
    """Create .venv and install the pinned packages and labkit, unless that is already done."""
    if sys.platform not in ("linux", "darwin"):
        windows = sys.platform in ("win32", "cygwin")
        sys.exit(ON_WINDOWS if windows else f"{SUPPORTED}, not {sys.platform}; or use Binder")
    if sys.version_info < (3, 11):  # noqa: UP036 (this file runs before any venv exists)
        sys.exit(f"Commit Window Lab needs Python 3.11 or newer, not {sys.version.split()[0]}")
    sources = b"".join((ROOT / name).read_bytes() for name in ("environment.yml", "pyproject.toml"))
    stamp = VENV / f".set-up-{hashlib.sha256(sources).hexdigest()[:16]}"
    if stamp.exists():
        return
    print("Setting up .venv from environment.yml ...", flush=True)
    if not (BIN / "python").exists():
        venv.create(VENV, with_pip=True)
    packages = pinned_packages()
    uv = next(p for p in packages if p.startswith("uv=="))
    run(BIN / "python", "-m", "pip", "install", "--quiet", uv)
    # Bytecode compiled now, once: where PYTHONDONTWRITEBYTECODE is set (as on some CI
    # machines), every start would otherwise recompile LangGraph (about 2 s more per import).
    run(
        BIN / "uv",
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
        BIN / "python",
        *packages,
    )
    # compat mode: a plain path entry, so that every interpreter start stays fast
    run(BIN / "uv", "pip", "install", "--quiet", "--python", BIN / "python", "--no-deps",
        "--config-settings", "editable_mode=compat", "-e", ROOT)  # fmt: skip
    run(BIN / "python", "-m", "compileall", "-q", ROOT / "labkit")
    for old in VENV.glob(".set-up-*"):
        old.unlink()
    stamp.touch()


def run(*command: object) -> None:
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True)


def lab(extra: list[str]) -> None:
    root_flag = ["--allow-root"] if os.geteuid() == 0 else []
    start = [str(BIN / "jupyter"), "lab", "notebooks/00_start_here.ipynb", *root_flag, *extra]
    os.execv(start[0], start)


def test(extra: list[str]) -> None:
    """The suite in one more pytest-xdist worker than there are cores, four at most (each
    worker has its own temp folder and runs home, and a test looks only for the processes it
    started): most of a test's time is waiting for its processes, so on 2 cores two workers
    kept them busy 132% of the time, and a third fills the waits (557 s with two, 473 s with
    three, 483 s with four). `-n 0` runs one at a time."""
    workers = str(min(4, (os.cpu_count() or 1) + 1))
    parallel = [] if "-n" in extra else ["-n", workers, "--dist", "worksteal"]
    # argv[0] must be the venv's own path: Python finds its environment from it
    command = [str(BIN / "python"), "-m", "pytest", *parallel, *extra]
    os.execv(command[0], command)


def hub(extra: list[str]) -> None:
    """The workshop's JupyterHub on 127.0.0.1 (labkit/hub/start.py; its proxy from npm goes
    into .hub/proxy at its first start)."""
    command = [str(BIN / "python"), "-m", "labkit.hub", *extra]
    os.execv(command[0], command)


# Mutation testing (issue 33): the modules whose mistakes a reader cannot see (the judges, the
# explorer's checker and recording, the outcome words, the runs home, the receivers and
# fences), each with the few tests that guard it, so that a module takes minutes, not hours.
# On demand or on a schedule, never in CI's run. Scores, and the mutants left: tests/README.md.
# The recording's modules, and the program watch: their code runs in an exploration's workers,
# where mutmut's stats see no call. Each of their functions gets every guard test, even one a
# test's own process calls too: that test alone would be chosen, and the explorations that
# show the mutant would never run (`die`'s SIGKILL, seen only by a fork that it ends).
RECORDING = ("record", "watches", "states", "written_file", "disk_waits")
IN_WORKERS = {f"labkit/studies/explorer/{module}.py" for module in (*RECORDING, "programs")}
GUARDS = {
    # the shared machinery, and lesson 1's exercise through it (with every lesson's, a
    # surviving mutant ran every exercise test: minutes each)
    **{
        f"labkit/workshop/{name}.py": [
            "tests/test_checks.py",
            "tests/test_exercises.py",
            "-k",
            "test_checks or lesson1",
        ]
        for name in ("checks", "verdicts", "answers", "reader_code", "predictions")
    },
    **{
        f"labkit/workshop/lesson{n}.py": [
            f"tests/test_lesson{n}_judge.py",
            "tests/test_exercises.py",
            "-k",
            f"lesson{n}",
        ]
        for n in (1,)
    },
    # lessons 3 to 5: each of their judges' verdicts is asserted word for word in its
    # test_lessonN_judge.py; with every wrong answer and right variant too (real crashes, or
    # LangGraph trials, each), a surviving mutant took minutes on two shared cores
    **{
        f"labkit/workshop/lesson{n}.py": [
            f"tests/test_lesson{n}_judge.py",
            "tests/test_exercises.py",
            "-k",
            f"lesson{n} and not a_wrong_answer and not a_right_variant",
        ]
        for n in (3, 4, 5)
    },
    "labkit/workshop/lesson2.py": [
        "tests/test_lesson2_judge.py",
        "tests/test_exercises.py",
        "tests/test_mutants.py",
        "-k",
        "lesson2 or commits_another_way or never_saw",
    ],
    "labkit/workshop/lesson9.py": [
        "tests/test_lesson9_judge.py",
        "tests/test_exercises.py",
        "tests/test_mutants.py",
        "-k",
        "lesson9 or lesson_9",
    ],
    "labkit/studies/explorer/checker.py": [
        "tests/test_checker.py",
        "tests/test_mutants.py",
        "tests/test_explorer.py",
        "tests/test_explorer_zh.py",
    ],
    # the recording: what it reads, and the explorations of the lab's own steps (commits, a
    # fork per crash state); with all of test_explorer*.py (graphs: LangGraph in each worker)
    # a surviving mutant took a minute on two shared cores, and 655 mutants hours
    # (record.py, split by job since: the same guards for each of its five modules)
    **{
        f"labkit/studies/explorer/{module}.py": [
            "tests/test_record.py",
            "tests/test_crash_points.py",
            "tests/test_crash_points_watched.py",
            "tests/test_crash_points_commits.py",
            "tests/test_crash_points_made.py",
            "tests/test_crash_points_refused.py",
            "tests/test_mutants_recording.py",
            "tests/test_explorer.py",
            "tests/test_explorer_shapes.py",
            "-k",
            "test_record or test_crash_points or test_mutants_recording"
            " or effect_first_fails or checkpoint_first_fails"
            " or fail_nowhere or equal_crash_states or killed_in_a_fork or a_claim_through"
            " or lesson_5s_service or work_still_running",
        ]
        for module in RECORDING
    },
    # the program watch: each way Python starts a program, run in an exploration's workers
    "labkit/studies/explorer/programs.py": [
        "tests/test_explorer_outside_watch.py",
        "-k",
        "program",
    ],
    "labkit/studies/commit_window/outcome.py": ["tests/test_mutants.py", "tests/test_study000.py"],
    # its words (describe_state, outcome_text), said by the view since issue 27
    "labkit/views/commit_window_words.py": ["tests/test_mutants.py"],
    **{
        f"labkit/bench/{name}.py": ["tests/test_runs_home.py"]
        for name in ("folders", "home", "cleaning")
    },
    "labkit/bench/tickets.py": [
        "tests/test_interrupts.py",
        "-k",
        "receiver or racing or a_ticket or payload_conflict",
    ],
    # the fences: their statements on real files, in pytest's own process (a race's workers
    # are isolated: with all of test_leases.py, each of 214 mutants took a minute), and the
    # sweep of every claim method under every pause
    "labkit/studies/leases/stores.py": [
        "tests/test_mutants_outcomes.py",
        "tests/test_leases.py",
        "-k",
        "test_mutants_outcomes or every_method_under_every_pause",
    ],
    # the outcome words of the other studies (commit_window's is above)
    **{
        f"labkit/studies/{study}/outcome.py": ["tests/test_mutants_outcomes.py"]
        for study in ("leases", "retries", "unknown_outcome", "outbox", "postgres")
    },
    # lessons 6 to 8: their judges against stand-in runs (each exercise test of theirs runs real
    # races, crashes or a real Postgres: minutes a mutant); the real checks stay in
    # test_exercises.py
    "labkit/workshop/lesson6.py": ["tests/test_lesson6_judge.py"],
    "labkit/workshop/lesson7.py": ["tests/test_lesson7_judge.py"],
    "labkit/workshop/lesson8.py": ["tests/test_lesson8_judge.py"],
}
# Tests that cannot pass under mutmut, whatever the mutant: a worker imports mutmut's
# trampolines, not only the standard library.
NOT_UNDER_MUTMUT = "not import_only and not imports_only"
MUTANTS = ROOT / "mutants"  # mutmut's work, a folder per module (git ignores it)
# How mutmut 3.8 runs here (names of its own code: keep the pin). Its stats see which tests
# call a function in pytest's own process only, and would crash a subprocess (it reads its
# config from the current folder): so they are hidden from subprocesses, which report their
# calls through SITE instead (`labkit` on the command line); a function that runs only in an
# isolated worker (the receivers, the recording) gets every guard test. The tests run in a
# scratch folder, not in mutmut's copy of the project, which a mutant that cleans the current
# folder (os.scandir(None) in the runs home's clean) would empty.
MUTMUT = """
import atexit, json, os, shutil, sys, tempfile
import pytest
from mutmut import __main__ as mutmut
from mutmut.runners.harness import PytestRunner
from mutmut.state import state
from mutmut.utils.format_utils import mangled_name_from_mutant_name

collect, execute = mutmut.collect_or_load_stats, PytestRunner.execute_pytest
set_mutant, HITS = mutmut.set_mutant_under_test, tempfile.mkdtemp(prefix="mutmut-hits-")
atexit.register(shutil.rmtree, HITS, ignore_errors=True)
os.chmod(HITS, 0o1733)  # a test's process run as another user hands its calls over too


def set_mutant_here(name):
    set_mutant(name)
    os.environ.pop("LABKIT_MUTMUT_HITS", None)
    if name == "stats":
        del os.environ["MUTANT_UNDER_TEST"]
        os.environ["LABKIT_MUTMUT_HITS"] = HITS


def hand_over_at_exit():
    # a fork of this process (a test's own, as test_crash_points_commits' `alone`) ends with
    # os._exit, which runs no atexit: while stats are collected its calls would be lost, and
    # the test never chosen for the functions only its fork calls
    real_exit = os._exit

    def exit_handing_over(code):
        try:
            if os.environ.get("LABKIT_MUTMUT_HITS"):
                with open(os.path.join(HITS, f"{os.getpid()}.json"), "w") as out:
                    json.dump(sorted(state()._stats), out)
        finally:
            real_exit(code)

    os._exit = exit_handing_over


os.register_at_fork(after_in_child=hand_over_at_exit)


def guard_the_rest():
    guards, tests = set(state().duration_by_test), state().tests_by_mangled_function_name
    every = os.environ.get("LABKIT_MUTMUT_EVERY_GUARD")
    for _, name, _ in mutmut.collect_source_file_mutation_data(mutant_names=())[0]:
        function = mangled_name_from_mutant_name(name.replace("__init__.", ""))
        tests[function] = set(guards) if every else tests.get(function) or set(guards)


def collect_then_guard_the_rest(runner, **options):
    # as stats are collected too: a module whose every function runs in isolated workers (the
    # program watch) would have no test at all, and mutmut would stop there
    collect_stats = runner.collect_stats

    def collect_stats_then_guard_the_rest(tests):
        code = collect_stats(tests)
        guard_the_rest()
        return code

    runner.collect_stats = collect_stats_then_guard_the_rest
    collect(runner, **options)
    guard_the_rest()  # stats loaded from an earlier run


class Elsewhere:
    def pytest_collection_finish(self, session):
        self.folder = tempfile.mkdtemp(prefix="mutmut-cwd-")
        os.chdir(self.folder)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item, nextitem):
        for name in os.listdir(HITS):
            with open(os.path.join(HITS, name)) as hits:
                state()._stats.update(json.load(hits))
            os.unlink(os.path.join(HITS, name))

    def pytest_unconfigure(self, config):
        shutil.rmtree(getattr(self, "folder", ""), ignore_errors=True)
        # labkit's trial server outlives a session in this process, with that session's TMPDIR
        # (removed at its end): the next session's calls would find it gone
        server = sys.modules.get("labkit.bench.server")
        if server is not None:
            server.stop()


def execute_elsewhere(runner, params, **options):
    options["plugins"] = [*options.get("plugins", ()), Elsewhere()]
    return execute(runner, params, **options)


mutmut.set_mutant_under_test = set_mutant_here
mutmut.collect_or_load_stats = collect_then_guard_the_rest
PytestRunner.execute_pytest = execute_elsewhere
mutmut.cli(sys.argv[1:])
"""
# A test's subprocess (not an isolated worker) imports this at its start: while mutmut
# collects its stats, it records which functions the subprocess called and hands them over.
SITE = """
import os

if os.environ.get("LABKIT_MUTMUT_HITS"):
    try:
        import atexit, json
        from mutmut import configuration
        from mutmut.mutation import trampoline
        from mutmut.state import state

        here = os.getcwd()
        os.chdir(os.environ["LABKIT_MUTMUT_WORK"])
        configuration.config()
        os.chdir(here)
        trampoline._mutant_under_test = "stats"
        hits = os.path.join(os.environ["LABKIT_MUTMUT_HITS"], f"{os.getpid()}.json")

        def hand_over():
            try:
                with open(hits, "w") as out:
                    json.dump(sorted(state()._stats), out)
            except OSError:
                pass

        atexit.register(hand_over)
    except Exception:  # another user's process, or a folder it may not enter: no stats
        pass
"""


def mutate(modules: list[str]) -> None:
    """Run mutmut over each module (all of GUARDS if none is named: a path, or its end) with
    the tests that guard it, in mutants/<module>/; print its score and what survived. Fail
    (status 1) if a survivor is not in EXPLAINED: .ci/mutate, on a schedule, relies on it."""
    chosen = []
    for name in modules or list(GUARDS):
        found = [
            m for m in GUARDS if m == name or m.endswith("/" + name.removesuffix(".py") + ".py")
        ]
        if not found:  # a name several end with (outcome.py) runs each of them
            print(f"mutate: {name!r} is not one of: {', '.join(GUARDS)}", file=sys.stderr)
            sys.exit(2)
        chosen += found
    explained, scores, unexplained = explained_mutants(), [], []
    for module in chosen:
        score, status = mutate_one(module)
        scores.append(score)
        unexplained += unexplained_survivors(status, explained)
    print(
        "\n".join(["", "module: killed of mutants (score); survived, no tests, timeout", *scores])
    )
    if unexplained:
        print(f"\nnot killed and not in {EXPLAINED.relative_to(ROOT)}:", *unexplained, sep="\n  ")
        sys.exit(1)


# The survivors tests/README.md explains (equivalent, or left to tests the guards do not run),
# by mutmut's name; a mutmut status that means a test noticed the mutant.
EXPLAINED = ROOT / "tests" / "mutants_explained.txt"
EXPLANATIONS = ("equivalent", "unguarded")
CAUGHT = ("killed", "timeout", "segfault", "caught by type check")


def explained_mutants() -> dict[str, str]:
    """EXPLAINED's mutants: name -> its kind (EXPLANATIONS); # starts a comment."""
    lines = (line.split("#", 1)[0].split() for line in EXPLAINED.read_text().splitlines())
    return {words[1]: words[0] for words in lines if words}


def mutant_module(name: str) -> str:
    """The module a mutmut name is of: labkit.bench.home.x_f__mutmut_1 -> labkit/bench/home.py
    (a method's name has ǁ around its class: labkit.bench.tickets.xǁTicketsǁfind__mutmut_7)."""
    return re.split(r"\.x[_ǁ]", name, maxsplit=1)[0].replace(".", "/") + ".py"


def unexplained_survivors(status: dict[str, str], explained: dict[str, str]) -> list[str]:
    """The mutants of a run (name -> mutmut's status) that no test caught and EXPLAINED does
    not name, each with its status."""
    return [
        f"{word}: {name}"
        for name, word in sorted(status.items())
        if word not in CAUGHT and name not in explained
    ]


def mutate_one(module: str) -> tuple[str, dict[str, str]]:
    """One module's mutation run: its line of scores, and each mutant's status."""
    work = MUTANTS / module.removesuffix(".py").replace("/", ".")
    shutil.rmtree(work / "mutants", ignore_errors=True)  # a score of today's code and tests
    # made before mutmut starts: a path entry missing at the start is never looked in again
    (work / "mutants").mkdir(parents=True)
    # mutmut copies them into work/mutants (notebooks: the exercises' solutions, which a check
    # shows)
    for name in ("labkit", "tests", "pyproject.toml", "notebooks"):
        if not (work / name).is_symlink():
            (work / name).symlink_to(ROOT / name)
    guards = GUARDS[module]
    files = [g for g in guards if g.startswith("tests/")]
    chosen = f"({guards[guards.index('-k') + 1]}) and " if "-k" in guards else ""
    settings = {
        "source_paths": ["labkit"],
        "only_mutate": [module],
        "also_copy": ["notebooks"],
        "pytest_add_cli_args": ["-p", "no:nbmake"],
        "pytest_add_cli_args_test_selection": [*files, "-k", chosen + NOT_UNDER_MUTMUT],
    }
    lines = [f"{key}=" + "".join(f"\n    {v}" for v in values) for key, values in settings.items()]
    config = ["[mutmut]", *lines, "use_git_change_detection=false"]
    (work / "setup.cfg").write_text("\n".join(config) + "\n")
    (work / "site").mkdir(exist_ok=True)
    (work / "site" / "sitecustomize.py").write_text(SITE)
    print(f"\n=== {module}: {' '.join(GUARDS[module])}", flush=True)
    # a test's `python -m labkit` runs mutmut's copy (with the mutant), as its workers do
    path = f"{work / 'site'}{os.pathsep}{work / 'mutants'}"
    env = {**os.environ, "PYTHONPATH": path, "LABKIT_MUTMUT_WORK": str(work)}
    if module in IN_WORKERS:
        env["LABKIT_MUTMUT_EVERY_GUARD"] = "1"
    subprocess.run([str(BIN / "python"), "-c", MUTMUT, "run"], cwd=work, env=env, check=False)
    listed = subprocess.run(
        [str(BIN / "mutmut"), "results", "--all", "true"], cwd=work, capture_output=True, text=True
    )
    status = dict(
        line.strip().rsplit(": ", 1) for line in listed.stdout.splitlines() if ": " in line
    )
    counts = {word: sum(1 for s in status.values() if s == word) for word in set(status.values())}
    killed, total = counts.get("killed", 0), len(status)
    for name, word in sorted(status.items()):
        if word != "killed":
            print(f"  {word}: {name}")
    score = f"{100 * killed / total:.0f} %" if total else "no mutants"
    left = ", ".join(str(counts.get(w, 0)) for w in ("survived", "no tests", "timeout"))
    return f"{module}: {killed} of {total} ({score}); {left}", status


def main() -> None:
    commands = {"lab": lab, "test": test, "binder": binder, "mutate": mutate, "hub": hub}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:  # a usage error: status 2, as argparse
        print(
            f"usage: python3 tasks.py {{{'|'.join(commands)}}} [extra arguments]", file=sys.stderr
        )
        sys.exit(2)
    os.chdir(ROOT)
    if sys.argv[1] != "binder":  # that one only writes two files
        set_up()
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
