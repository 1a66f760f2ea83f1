tickets_after = {
    "new_key": 2,  # the service cannot tell the retry from a new operation
    "same_key": 1,  # UNIQUE(tenant, op_key): the original ticket comes back
    "reconcile": 1,  # the look-up finds the ticket the lost reply was about
    "give_up": 1,  # the ticket exists anyway: an orphan the workflow believes failed
}

lesson5.predict_tickets.check(tickets_after)
