def report_step(control, effect, gate):
    # The bug: the key held the hour, and a retry comes a day and an hour later, in a new
    # process: a new key, so the receiver took the retry for a new operation (crash point 1
    # was a duplicate). The operation's own key, fixed before the first attempt, is the same
    # on every retry; add_receipt_once gives the retry the original receipt.
    with effect:
        effect.add_receipt_once(KEY, PAYLOAD)
    with control:
        control.mark_done()


lesson9.green_matrix.check(report_step)
