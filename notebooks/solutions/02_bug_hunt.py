def buggy_step(control, effect, gate):
    # The bug: a new UUID on every attempt made every retry look like a new operation.
    # The key must be fixed before the first attempt and reused by every retry.
    key = KEY
    with effect:
        effect.add_receipt_once(key, PAYLOAD)
    with control:
        control.mark_done()


lesson2.bug_hunt.check(buggy_step)
