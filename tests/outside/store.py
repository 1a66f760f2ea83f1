"""The reader's store module, called by driver.py: the commit the crash point must name."""

import sqlite3


def record_shipment(order: str) -> None:
    db = sqlite3.connect("shipments.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS shipments(order_id TEXT)")
    db.execute("INSERT INTO shipments VALUES(?)", (order,))
