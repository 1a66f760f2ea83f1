def receive(db, writer, fence, body):
    # The check is the write's own WHERE: one statement, one transaction, no window.
    # The document keeps the highest token it accepted; a lower one changes nothing.
    written = db.execute(
        "UPDATE document SET body=?, writer=?, fence=? WHERE id='report-17' AND fence <= ?",
        (body, writer, fence, fence),
    ).rowcount
    return written == 1


lesson6.fenced_receiver.check(receive)
