"""Study 004's figures beside today's, in the reader's language (durability.toml's
[reported]): the study's own words for each figure, quoted, and today's numbers said from the
fields `labkit.studies.durability.reported.today_figures` computes."""

from __future__ import annotations

from collections.abc import Sequence

from labkit.language import say
from labkit.studies.durability.experiment import Trial
from labkit.studies.durability.reported import STUDY_004_FIGURES, Span, today_figures

__all__ = ["beside_today", "today_words"]

TODAY = "durability.reported.today"


def span_words(counts: Span) -> str:
    """3, or "1 to 4"; "none" if nothing was counted."""
    if counts is None:
        return say(f"{TODAY}.none")
    low, high = counts
    return str(low) if low == high else say(f"{TODAY}.span", low=low, high=high)


def today_words(figure: str, fields: dict) -> str:
    """One of today's figures in words ("3 lines beyond the clean run's 8 in ...")."""
    f = {k: span_words(v) if isinstance(v, tuple) or v is None else v for k, v in fields.items()}
    if figure == "slow_async_extra_lines":
        first = (
            say(f"{TODAY}.extra_lines", **f)
            if fields["resumed"]
            else say(f"{TODAY}.none_resumed", trials=f["trials"])
        )
        return first + say(f"{TODAY}.kept", kept=f["kept"])
    said = {
        "slow_sync_repeats": lambda: say(f"{TODAY}.repeats", **f),
        "writes_at_kill": lambda: say(f"{TODAY}.writes", **f),
        "rerun_drift": lambda: f["span"],
        "sync_extra_cost": lambda: say(f"{TODAY}.extra_cost", **f),
        "mistyped_mode": lambda: say(f"{TODAY}.mistyped", **f),
        "clean_checkpoints_local": lambda: " / ".join(map(str, fields["counts"])),
    }
    if figure in said:
        return said[figure]()
    return " / ".join(say(f"{TODAY}.seconds", seconds=s) for s in fields["seconds"])


def beside_today(
    matrix: Sequence[Trial], slow: Sequence[Trial], clean: dict, mistyped: dict
) -> list[tuple[str, str, str]]:
    """(figure, what study 004 reported, what today's runs gave) for each of the study's
    figures; the arguments as `today_figures` takes them."""
    today = today_figures(matrix, slow, clean, mistyped)
    return [
        (
            say(f"durability.reported.label.{k}"),
            say(f"durability.reported.study.{k}"),
            today_words(k, today[k]),
        )
        for k in STUDY_004_FIGURES
    ]
