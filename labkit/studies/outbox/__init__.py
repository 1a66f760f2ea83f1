"""The transactional outbox, lesson 5's second half (notebooks/05_the_unknown_outcome): the way
out of a call whose outcome is unknown that study 001 and study 004 both advise, and the
duplicate it still leaves.

The flow, one module a step: `experiment` (the reader's choice, `OutboxSpec`, and the run) →
`producer` (the order and its outbox row in one transaction of business.db) → `relay` (delivers
each unsent message to a `consumer` process of its own, then marks it sent: killed in between,
the next relay delivers it again) → `consumer` (applies the effect in consumer.db; with an
inbox keyed (subscriber, message id) in the same transaction, a redelivery changes nothing).
`explorer.readers_writes` gives a reader's consumer a kill point after each commit and write
to the run's files. `stores` holds the two files' schemas and writers, `stepping` pauses at
each boundary, and `graph` / `replay` put the producer in a LangGraph node that is killed and
replayed (the node runs twice, the outbox row is written once).
"""
