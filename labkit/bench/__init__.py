"""The bench: what every study shares, and nothing that belongs to one.

Bad input and its one-line errors (`errors`), where runs live (`folders`), the trace every
worker writes (`trace`), the gate at each kill point (`gate`), starting, stopping, killing and
reaping workers (`launcher`), the trial server that imports LangGraph once and forks spare
workers from it (`server`, `spares`), the append-only ledger of node runs (`ledger`), a
LangGraph worker's own checkpointer (`checkpoints`), a receiver that knows operations by key
(`tickets`), reading SQLite files back through a new read-only connection (`snapshot`), step
mode's rules (`stepping`), a worker restarted as after a real crash (`restart`), and when a run
claims no outcome (`failures`).

Workers import from here too, so this package's `__init__` imports nothing: a worker pays
only for the modules it uses.
"""
