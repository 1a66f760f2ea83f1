"""A step that imports a helper module from its own folder, as a project's code does."""

from sibling_helper import operation_key

from labkit.studies.commit_window.stores import PAYLOAD


def step(control, effect, gate):
    with effect:
        effect.add_receipt_once(operation_key(), PAYLOAD)
    with control:
        control.mark_done()
