"""One sub-package per study, each the whole experiment of one lesson topic: its worker steps
or graphs, its experiment runner and its outcome rules, built on `labkit.bench`.

- `commit_window`: study 000, lessons 1 and 2: a business commit and a checkpoint commit in
  two SQLite files, killed between them.
- `interrupt_resume`: study 001, lesson 3: LangGraph's `interrupt()` and resume run the node
  again; a stable operation key against a fresh one.
- `durability`: study 004, lesson 4: LangGraph's durability modes under SIGKILL, and the
  study's five real errors.
"""
