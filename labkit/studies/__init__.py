"""One sub-package per study, each the whole experiment of one lesson topic: its worker steps
or graphs, its experiment runner and its outcome rules, built on `labkit.bench`.

- `commit_window`: study 000, lessons 1 and 2: a business commit and a checkpoint commit in
  two SQLite files, killed between them.
- `interrupt_resume`: study 001, lesson 3: LangGraph's `interrupt()` and resume run the node
  again; a stable operation key against a fresh one.
- `durability`: study 004, lesson 4: LangGraph's durability modes under SIGKILL, and the
  study's five real errors.
- `unknown_outcome`: lesson 5: a remote call (a real HTTP service on 127.0.0.1) whose outcome
  is unknown, and the caller's four ways to recover.
- `outbox`: lesson 5: the transactional outbox, its relay that delivers twice, and the
  consumer's inbox.
"""
