"""Lesson 8 (notebooks/08_retries_and_drains): LangGraph's other ways to run a node twice, or not
at all, beside a kill: `RetryPolicy`, `TimeoutPolicy`, node error handlers (#9002), a graceful
drain against SIGTERM and SIGKILL, the first checkpoint (#8764) and the functional API.

The kernel's side: `spec` (the reader's choices, checked before anything starts) and
`experiment` (one call to the trial server per run). Inside the trial server: `runs` (one
section's run: its workers, then the ledger, the payment service and the checkpoint file read
back) and `distribution` (first-checkpoint trials, as many as `sequential` says are needed).
In the forked workers, one module per section: `payments` (retries, timeouts, keys),
`handlers`, `drain`, `first_checkpoint`, `functional`; `hooks` is what their nodes get from the
worker. `outcome` names what the files show, `warm` prepares the graphs before the server
forks; `sequential` (standard library) says when a distribution is clear enough to stop.
"""
