def release_gate(trial):
    # Study 001's gate: each line catches a candidate the other two let through.
    return (
        trial("tickets_after_crash") == 1  # exactly one ticket after a crash and a resume
        and trial("tickets_after_rejection") == 0  # a rejected approval: zero actions
        and trial("changed_title") == "refused"  # a changed title needs a new confirmation
    )


lesson3.release_gate.check(release_gate)
