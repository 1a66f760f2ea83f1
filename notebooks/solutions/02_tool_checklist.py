checklist = {
    "effect_first/idempotent": "no",  # a second attempt adds a second receipt
    "effect_first/key": "none",  # op_key is written, but the receiver enforces nothing
    "effect_first/on_retry": "duplicate",
    "idempotent/idempotent": "yes",  # UNIQUE(op_key): one receipt per operation
    "idempotent/key": "job-17:save-report:v1",  # KEY, fixed before the first attempt
    "idempotent/on_retry": "original",  # the retry gets receipt 1 back
    "queue_pop/idempotent": "no",  # a pop consumes: a second pop takes another job
    "queue_pop/key": "none",
    "queue_pop/on_retry": "next job",  # job-1 left the queue with the killed worker
}

lesson2.tool_checklist.check(checklist)
