"""Outside-shaped steps whose key changes across a real restart, though not within a day:
a report saved once a month (or a year) under a key of its month, and a key from `hash()`,
whose seed a new interpreter draws again. Each duplicates only after its own restart."""

import time

from labkit.studies.commit_window.stores import PAYLOAD


def save_once(effect, control, key: str) -> None:
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()


def monthly(control, effect, gate):
    save_once(effect, control, f"report:{time.strftime('%Y-%m')}")


def yearly(control, effect, gate):
    save_once(effect, control, f"report:{time.strftime('%Y')}")


def hashed(control, effect, gate):
    save_once(effect, control, f"report:{hash(PAYLOAD)}")
