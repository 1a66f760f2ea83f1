"""Study 001, lesson 3 (notebooks/03_interrupt_and_resume): LangGraph's `interrupt()` and
`Command(resume=...)` run the interrupted node again from its start.

`experiment` (the reader's choice, run by the trial server) → `graphs` (the two layouts, in
forked workers; imports LangGraph) → `tickets` (the receiver: UNIQUE(tenant, op_key)).
"""
