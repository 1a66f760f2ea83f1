"""Shape: LangGraph's node cache in a SQLite file, as its docs set one up
(`compile(cache=SqliteCache(path=...))`, a `CachePolicy` on the slow node): a price looked up
once is kept in cache.db. The booking is written once (`graph`), or once a run (`twice`, a
plain INSERT). `own_cache` keeps the reader's own table named `cache` (of another shape) in
memo.db, a row a run: an effect of theirs like any other."""

import sqlite3
from typing import TypedDict

from langgraph.cache.sqlite import SqliteCache
from langgraph.graph import START, StateGraph
from langgraph.types import CachePolicy


class State(TypedDict):
    city: str
    price: int


def lookup(state: State) -> dict:
    return {"price": len(state["city"]) * 10}


def book(state: State) -> dict:
    with sqlite3.connect("bookings.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS bookings (city TEXT PRIMARY KEY, price INT)")
        db.execute("INSERT OR IGNORE INTO bookings VALUES (?, ?)", (state["city"], state["price"]))
    return {}


def book_each_time(state: State) -> dict:
    with sqlite3.connect("bookings.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS bookings (city TEXT, price INT)")
        db.execute("INSERT INTO bookings VALUES (?, ?)", (state["city"], state["price"]))
    return {}


def remember(state: State) -> dict:
    with sqlite3.connect("memo.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS cache (city TEXT, price INT)")
        db.execute("INSERT INTO cache VALUES (?, ?)", (state["city"], state["price"]))
    return {}


def cached(booking: object, cache: object) -> object:
    builder = StateGraph(State)
    builder.add_node("lookup", lookup, cache_policy=CachePolicy())
    builder.add_node("book", booking)
    builder.add_edge(START, "lookup")
    builder.add_edge("lookup", "book")
    return builder.compile(cache=cache)


graph = cached(book, SqliteCache(path="cache.db"))
twice = cached(book_each_time, SqliteCache(path="cache.db"))
own_cache = cached(remember, None)
INPUT = {"city": "Paris", "price": 0}
