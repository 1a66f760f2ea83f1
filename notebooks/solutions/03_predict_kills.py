tickets_after = {
    "before_create": 2,  # the node runs in recovery (up to the interrupt), then on the resume
    "after_create": 3,  # plus the ticket the killed process had already created
    "paused": 2,  # the interrupt was saved: only the resume runs the node again
}

lesson3.predict_kills.check(tickets_after)
