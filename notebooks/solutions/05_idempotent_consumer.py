def consume(db, subscriber, message_id, payload):
    # The inbox row and the effect commit in this one transaction: both, or neither.
    new = db.execute(
        "INSERT OR IGNORE INTO inbox(subscriber, message_id) VALUES(?, ?)",
        (subscriber, message_id),
    ).rowcount
    if new:  # 0: an earlier delivery of this message took effect already
        db.execute("INSERT INTO effects(message_id, payload) VALUES(?, ?)", (message_id, payload))


lesson5.idempotent_consumer.check(consume)
