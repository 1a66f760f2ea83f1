"""A reader's choice, checked and frozen: what one run will do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from labkit.bench.errors import MAX_TIMEOUT, check_choice, check_folder, check_number, refusal
from labkit.studies.commit_window.orders import NO_KILL, WriteOrder, get_order

__all__ = ["KILL_MODES", "RunSpec"]

KILL_MODES = ("exit", "sigkill")  # os._exit(91) inside the worker, or SIGKILL from the parent


@dataclass(frozen=True)
class RunSpec:
    """One crash-and-recover run. Invalid values raise LabError naming the valid choices."""

    order: str
    kill_at: str = NO_KILL
    kill_mode: str = "exit"
    out: Path | None = None  # a folder that must not exist yet; None: a new temporary folder
    timeout: float = 10.0  # seconds each worker may take before the launcher kills it
    step_source: str | None = None  # a reader's own step (exercises), run in place of the order's
    step_name: str | None = None  # the function in step_source to run

    def __post_init__(self) -> None:
        if self.step_source is None:  # a reader's step has the kill points its commits make
            get_order(self.order).check_kill_point(self.kill_at)
        else:
            get_order(self.order)
            if not isinstance(self.step_source, str) or not isinstance(self.step_name, str):
                source, name = repr(self.step_source), repr(self.step_name)
                raise refusal("step_source_and_name", source=source, name=name)
        check_choice("kill mode", self.kill_mode, KILL_MODES)
        check_folder("out", self.out)
        check_number("timeout", self.timeout, 0, MAX_TIMEOUT)

    @property
    def write_order(self) -> WriteOrder:
        return get_order(self.order)

    @property
    def label(self) -> str:
        return f"{self.order}.{self.kill_at}.{self.kill_mode}"
