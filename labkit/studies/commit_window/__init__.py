"""Study 000, lessons 1 and 2 (notebooks/01_the_commit_window, 02_closing_the_window): one
workflow step commits a receipt (`effect.db`) and a checkpoint (`control.db`); a worker is
killed between the two commits and a fresh one recovers.

The flow, one module a step: `orders` and `spec` (the reader's choice) → `runs` (the launcher
starts `worker`, which writes through `stores`) → `outcome` (the word for what is left);
`sweeps` runs every kill point, `stepping` pauses at each one, `history` rebuilds the files at
every trace event, `receiver` talks to the idempotent receiver directly, `learner` runs a
reader's own step (an exercise) with a kill point after every commit it makes, and
`expired_key` recovers the idempotent step a day later against a receiver whose keys expire
(its worker: `expiring`).
"""
