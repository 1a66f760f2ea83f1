def my_step(control, effect, gate):
    with effect:
        # The receiver recognises the operation key: a retry gets the original receipt back.
        effect.add_receipt_once(KEY, PAYLOAD)
    with control:
        control.mark_done()


lesson2.safe_step.check(my_step)
