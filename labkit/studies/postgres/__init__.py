"""Lesson 7 (notebooks/07_real_postgres): the commit window and a crash on a real Postgres.

`spec` (the reader's choices and what a run found) → `experiment` (the kernel's side: asks the
trial server) → `runs` (in the trial server: starts the workers, the crashes, reads back) →
`workers` (forked workers: one step, a racing step, a client whose commit is in flight) →
`stores` (the tables and a traced Postgres session). The server itself is the bench's
(`labkit.bench.postgres`). Durability with a Postgres checkpointer is study 004's own
(`studies.durability`, checkpointer="postgres").
"""
