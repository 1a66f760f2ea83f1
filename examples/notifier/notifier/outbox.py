"""The notifications this service sends, one row each, in the service's own SQLite file."""

import sqlite3


def send_shipped_notice(order_id: str, email: str) -> None:
    """Queue the 'your order has shipped' mail. The order id is the row's key: sent again
    after a crash, the same notice is ignored, never mailed twice."""
    db = sqlite3.connect("notifications.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS outbox(order_id TEXT PRIMARY KEY, email TEXT)")
    db.execute("INSERT OR IGNORE INTO outbox VALUES(?, ?)", (order_id, email))
    db.close()
