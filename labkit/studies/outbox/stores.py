"""The outbox's two SQLite files, as its producer, relay and consumer write them.

`business.db` is the producer's: the business row (`orders`) and the message about it
(`outbox`) commit in one transaction, so neither exists without the other; the relay marks a
message `sent` there once the consumer has answered. `consumer.db` is the subscriber's: what a
message made happen (`effects`) and, for a consumer that deduplicates, the messages it has
taken in (`inbox`, UNIQUE(subscriber, message_id)), written in one transaction with the effect.
Every transaction is traced (`bench.store`). Worker-side: standard library only.
"""

from __future__ import annotations

import os
import sqlite3

from labkit.bench.store import TracedStore

__all__ = [
    "BUSINESS_FILE",
    "CONSUMER_FILE",
    "FILES",
    "ITEM",
    "ORDER_KEY",
    "SUBSCRIBER",
    "BusinessStore",
    "ConsumerStore",
    "create_files",
]

BUSINESS_FILE = "business.db"
CONSUMER_FILE = "consumer.db"
FILES = (BUSINESS_FILE, CONSUMER_FILE)
ORDER_KEY = "order-17"
ITEM = "sku-4711"  # an item code: data in no language (issue 27)
SUBSCRIBER = "shipping"  # the consumer's name: its inbox is keyed (subscriber, message_id)

BUSINESS_SCHEMA = """
CREATE TABLE orders(id INTEGER PRIMARY KEY, order_key TEXT NOT NULL, item TEXT NOT NULL);
CREATE TABLE outbox(id INTEGER PRIMARY KEY, message_id TEXT NOT NULL UNIQUE,
                    payload TEXT NOT NULL, sent INTEGER NOT NULL DEFAULT 0);
"""
CONSUMER_SCHEMA = """
CREATE TABLE effects(id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, payload TEXT NOT NULL);
CREATE TABLE inbox(id INTEGER PRIMARY KEY, subscriber TEXT NOT NULL, message_id TEXT NOT NULL,
                   UNIQUE(subscriber, message_id));
"""


def create_files(run_dir: str | os.PathLike) -> None:
    """Both files, empty, before any worker runs."""
    for name, schema in ((BUSINESS_FILE, BUSINESS_SCHEMA), (CONSUMER_FILE, CONSUMER_SCHEMA)):
        db = sqlite3.connect(os.path.join(run_dir, name), isolation_level=None)
        db.execute("PRAGMA synchronous=OFF")  # set-up before any worker: no crash to survive yet
        db.executescript(schema)
        db.close()


class BusinessStore(TracedStore):
    """business.db: orders and their outbox; `with store:` is one traced transaction."""

    def add_order(self, order_key: str, item: str) -> int:
        """The business row alone (its message goes in with `add_message`, same transaction)."""
        cursor = self.db.execute(
            "INSERT INTO orders(order_key, item) VALUES(?, ?)", (order_key, item)
        )
        row = {"id": cursor.lastrowid, "order_key": order_key, "item": item}
        self.wrote("orders", "insert", row)
        return cursor.lastrowid

    def add_message(self, message_id: str, payload: str) -> bool:
        """An outbox row, unless one with this message id is there already (INSERT OR IGNORE):
        a writer that runs again with the same id adds nothing. True if it added the row."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO outbox(message_id, payload) VALUES(?, ?)", (message_id, payload)
        )
        if cursor.rowcount == 1:
            row = {"id": cursor.lastrowid, "message_id": message_id, "payload": payload, "sent": 0}
            self.wrote("outbox", "insert", row)
        return cursor.rowcount == 1

    def unsent(self) -> list[tuple[int, str, str]]:
        """(id, message_id, payload) of every message not yet marked sent, oldest first."""
        return self.db.execute(
            "SELECT id, message_id, payload FROM outbox WHERE sent=0 ORDER BY id"
        ).fetchall()

    def mark_sent(self, outbox_id: int) -> None:
        self.db.execute("UPDATE outbox SET sent=1 WHERE id=?", (outbox_id,))
        self.wrote("outbox", "update", {"id": outbox_id, "sent": 1})


class ConsumerStore(TracedStore):
    """consumer.db: the effects of messages, and the inbox of the ones taken in."""

    def take_in(self, subscriber: str, message_id: str) -> bool:
        """Note the message in the inbox; False if it was there already (a redelivery)."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO inbox(subscriber, message_id) VALUES(?, ?)",
            (subscriber, message_id),
        )
        if cursor.rowcount == 1:
            row = {"id": cursor.lastrowid, "subscriber": subscriber, "message_id": message_id}
            self.wrote("inbox", "insert", row)
        return cursor.rowcount == 1

    def apply(self, message_id: str, payload: str) -> None:
        """The effect itself: a new row every time it is called."""
        cursor = self.db.execute(
            "INSERT INTO effects(message_id, payload) VALUES(?, ?)", (message_id, payload)
        )
        row = {"id": cursor.lastrowid, "message_id": message_id, "payload": payload}
        self.wrote("effects", "insert", row)
