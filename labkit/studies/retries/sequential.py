"""When a distribution of kills is clear enough to stop: a sequential test on the lost share.

Lesson 8's first-checkpoint trials split into lost and kept runs. A mode whose runs all end
alike (sync keeps every one, exit loses every one) is clear after a few dozen trials; a mode
whose runs split (async: a race) needs more. So each mode runs until the 95 % Wilson interval
of its lost share is at most `margin` either side of the share seen, after at least `LEAST`
trials and at most the trials asked for. Standard library only: the trial server decides with
it, the views say the interval it gives.
"""

from __future__ import annotations

import math

__all__ = ["LEAST", "MARGIN", "Z95", "clear_enough", "wilson"]

Z95 = 1.959964  # the normal quantile of a two-sided 95 % interval
LEAST = 20  # trials before any stop: fewer would let one lucky run decide
MARGIN = 0.10  # the lesson's stop: the lost share known to within 10 percentage points


def wilson(lost: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the lost share `lost / trials` (0 to 1 each way). Unlike
    the textbook p ± z·√(p(1-p)/n), it is not zero wide when every trial ended alike."""
    if trials == 0:
        return 0.0, 1.0
    share, z2 = lost / trials, z * z
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def clear_enough(lost: int, trials: int, margin: float) -> bool:
    """Whether `trials` (with `lost` of them lost) are enough: at least LEAST, and the interval
    no wider than `margin` on either side of its centre. A margin of 0 never stops early."""
    if margin <= 0 or trials < LEAST:
        return False
    low, high = wilson(lost, trials)
    return (high - low) / 2 <= margin
