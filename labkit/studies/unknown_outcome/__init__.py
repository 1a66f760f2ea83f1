"""Study 001's closing section, lesson 5 (notebooks/05_the_unknown_outcome): the call whose
outcome is unknown. A caller asks a ticket service in another process over HTTP; a timeout
or a kill leaves it not knowing whether the ticket exists. Timed out is not failed.

The remote-call half, one module a step: `spec` (the reader's choice: a caller strategy and a
fault) → `experiment` (starts `service`, the ticket service on 127.0.0.1, once per run or
sweep, and `caller`, the caller worker, then a fresh caller that recovers) → `outcome` (the
Jepsen history and the word for what is left); `stepping` pauses the caller at each point.

The other way out of the unknown outcome, the transactional outbox, is a study of its own:
`labkit.studies.outbox`, the second half of the same lesson.
"""
