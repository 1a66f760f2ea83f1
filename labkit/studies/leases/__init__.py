"""Lesson 6 (notebooks/06_two_workers_one_task): two workers, one task. Study 000 closes with
the case it did not test, concurrent executors; here two real worker processes race for one
task row, one of them is frozen (SIGSTOP) for longer than its lease, and a receiver that checks
the fencing token in the effect's own transaction refuses its late write.

One module a step: `spec` (the reader's choice: a claim method, a pause, a lease) → `experiment`
(the forced schedule: the first worker frozen at its point, the lab's clock moved on, the
second worker run, the first thawed) → `worker` (claims by `stores`' statements, writes through
the receiver) → `outcome` (one winner, both ran, lost update, refused late write). `stepping`
runs the schedule one step at a time. LangGraph: `graph` (in the trial server) and `resume` (the
kernel's side): two processes resume one thread from one SqliteSaver file.
"""
