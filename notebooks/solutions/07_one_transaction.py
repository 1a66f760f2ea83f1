def step(db):
    # One transaction holds the check, the receipt and done=1: a kill leaves all or nothing.
    with db.transaction():
        # FOR UPDATE locks the row: a second worker waits here until this one commits,
        # then reads done=1. (In SQLite, BEGIN IMMEDIATE did that for the whole file.)
        if db.execute("SELECT done FROM progress WHERE id=1 FOR UPDATE")[0][0] == 1:
            return
        db.execute("INSERT INTO receipts(op_key, payload) VALUES (%s, %s)", (KEY, PAYLOAD))
        db.execute("UPDATE progress SET done=1 WHERE id=1")


lesson7.one_transaction.check(step)
