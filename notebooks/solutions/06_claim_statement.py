def claim(db, me, now, lease_ms):
    # One statement checks and claims: no other worker can come between the two.
    # Open, or claimed with an expired lease (held while now < lease_until); never done.
    row = db.execute(
        "UPDATE task SET state='claimed', owner=?, fence=fence+1, lease_until=? "
        "WHERE id='job-17' AND (state='open' OR (state='claimed' AND lease_until <= ?)) "
        "RETURNING fence",
        (me, now + lease_ms, now),
    ).fetchone()
    return row[0] if row else None  # the new token: one more than any claim before


lesson6.claim_statement.check(claim)
