"""Study 001, lesson 3 (notebooks/03_interrupt_and_resume): LangGraph's `interrupt()` and
`Command(resume=...)` run the interrupted node again from its start.

`experiment` (the reader's choice, run by the trial server) → `graphs` (the two layouts, in
forked workers; imports LangGraph) → `tickets` (the receiver: UNIQUE(tenant, op_key)).
`contract` tries the key contract directly; `thread_key` runs study 001's "why not the
thread_id" (three requests, two threads) and reads the workers' versions.
"""
