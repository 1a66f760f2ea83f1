"""The outcome words of the studies and the fences under them, to the row (issue 33: the
mutants mutmut left in studies/leases/stores.py and the studies' outcome.py modules).

Every word a lesson shows for a run comes from one of these functions: a wrong one misleads
every lesson that reads it. The leases' tests write real SQLite files through the lab's own
statements (a claim, a fenced and an unfenced receiver) and classify what they hold.
"""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from labkit.bench.snapshot import take_snapshot
from labkit.studies.leases import stores
from labkit.studies.leases.outcome import OUTCOMES as LEASE_OUTCOMES
from labkit.studies.leases.outcome import classify as lease_word
from labkit.studies.leases.outcome import race_counts
from labkit.studies.outbox import stores as outbox_stores
from labkit.studies.outbox.outcome import OUTBOX_OUTCOMES, outbox_counts, outbox_state_word
from labkit.studies.postgres.outcome import OUTCOMES as POSTGRES_OUTCOMES
from labkit.studies.postgres.outcome import outcome_of
from labkit.studies.retries.outcome import ORDER_OUTCOMES, order_outcome
from labkit.studies.unknown_outcome.outcome import JEPSEN_TYPES, jepsen_ops
from labkit.studies.unknown_outcome.outcome import OUTCOMES as CALL_OUTCOMES
from labkit.studies.unknown_outcome.outcome import classify as call_word

# --- the leases: the task table, the receiver, the clock ------------------------------------


@pytest.fixture
def lab(tmp_path):
    """A fresh run folder's files, and a connection to each (closed after the test)."""
    stores.create_files(str(tmp_path))
    with (
        contextlib.closing(stores.connect(str(tmp_path), stores.TASKS_FILE)) as tasks,
        contextlib.closing(stores.connect(str(tmp_path), stores.RECEIVER_FILE)) as receiver,
    ):
        yield tmp_path, tasks, receiver


def rows(run_dir, table: str) -> list[list]:
    return take_snapshot(run_dir, stores.FILES).table(table).rows


def test_new_files_hold_the_open_task_at_token_32_and_an_empty_document(lab):
    run_dir, _, _ = lab
    assert sorted(p.name for p in run_dir.iterdir()) == ["clock", "receiver.db", "tasks.db"]
    assert rows(run_dir, "task") == [["job-17", "open", None, 32, None]]
    assert rows(run_dir, "document") == [["report-17", "", None, 0]]
    assert rows(run_dir, "applied") == rows(run_dir, "refused") == []
    assert stores.lab_now(str(run_dir)) == 0
    stores.set_clock(str(run_dir), 250)
    assert stores.lab_now(str(run_dir)) == 250
    assert sorted(p.name for p in run_dir.iterdir()) == ["clock", "receiver.db", "tasks.db"]


def test_the_clock_is_written_in_the_run_folder_whatever_the_current_one_holds(
    lab, tmp_path_factory, monkeypatch
):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "clock.new").mkdir()  # a draft written here could not be opened
    monkeypatch.chdir(elsewhere)
    run_dir, _, _ = lab
    stores.set_clock(str(run_dir), 300)
    assert stores.lab_now(str(run_dir)) == 300
    assert [p.name for p in elsewhere.iterdir()] == ["clock.new"]


def test_a_connection_commits_each_statement_as_it_runs(lab):
    """Autocommit: another connection sees a write at once (a worker frozen after it must
    not hold it back in an open transaction)."""
    run_dir, tasks, _ = lab
    tasks.execute("UPDATE task SET owner='w9'")
    assert not tasks.in_transaction
    assert rows(run_dir, "task")[0][2] == "w9"


def test_a_transaction_takes_the_write_lock_at_its_start_and_rolls_back_on_an_error(lab):
    run_dir, _, receiver = lab
    with stores.transaction(receiver):
        other = sqlite3.connect(run_dir / stores.RECEIVER_FILE, timeout=0, isolation_level=None)
        with contextlib.closing(other), pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")  # nothing written yet, but the lock is taken
    assert not receiver.in_transaction
    with pytest.raises(KeyError), stores.transaction(receiver):
        stores.note_applied(receiver, "w1", 33, "draft")
        raise KeyError("boom")
    assert not receiver.in_transaction and rows(run_dir, "applied") == []


def test_a_lease_claim_takes_the_next_token_and_holds_until_its_lease_ends(lab):
    run_dir, tasks, _ = lab
    claim = stores.CLAIMS["lease_with_fence"]
    assert stores.CLAIMS["lease"] is stores.CLAIMS["renew_by_name"] is claim
    assert claim(tasks, "w1", 0, 200, print) == 33
    assert rows(run_dir, "task") == [["job-17", "claimed", "w1", 33, 200]]
    assert claim(tasks, "w2", 199, 200, print) is None  # held while now < lease_until
    assert claim(tasks, "w2", 200, 150, print) == 34  # expired at lease_until
    assert rows(run_dir, "task") == [["job-17", "claimed", "w2", 34, 350]]
    assert stores.finish(tasks, 33) is False  # the stale claim's token: not done
    assert stores.finish(tasks, 34) is True
    assert rows(run_dir, "task") == [["job-17", "done", "w2", 34, 350]]
    assert stores.finish(tasks, 34) is False  # done already
    assert claim(tasks, "w3", 10_000, 200, print) is None  # a done task is never claimed


def test_a_conditional_claim_has_one_winner_and_no_lease(lab):
    run_dir, tasks, _ = lab
    claim = stores.CLAIMS["conditional_update"]
    assert claim(tasks, "w1", 0, 200, print) == 33
    assert claim(tasks, "w2", 10_000, 200, print) is None
    assert rows(run_dir, "task") == [["job-17", "claimed", "w1", 33, None]]


def test_select_then_update_stops_between_its_read_and_its_claim(lab):
    run_dir, tasks, _ = lab
    claim, stopped = stores.CLAIMS["select_then_update"], []

    def stop(point: str) -> None:  # the other worker claims while this one is stopped
        stopped.append((point, rows(run_dir, "task")[0][1]))
        tasks.execute("UPDATE task SET state='claimed', owner='w2', fence=33")

    assert claim(tasks, "w1", 0, 200, stop) == 33  # it read 32: both hold token 33
    assert stopped == [("checked", "open")]
    assert rows(run_dir, "task") == [["job-17", "claimed", "w1", 33, None]]
    assert claim(tasks, "w3", 0, 200, stop) is None and len(stopped) == 1


def test_renewing_by_name_extends_any_row_under_that_name(lab):
    run_dir, tasks, _ = lab
    assert stores.renew_by_name(tasks, "w1", 0, 200) is False  # nobody holds it
    stores.CLAIMS["lease"](tasks, "w1", 0, 200, print)
    assert stores.renew_by_name(tasks, "w2", 50, 200) is False
    assert stores.renew_by_name(tasks, "w1", 50, 300) is True
    assert rows(run_dir, "task")[0][4] == 350


def test_the_fenced_receiver_refuses_33_after_34_and_accepts_an_equal_token(lab):
    run_dir, _, receiver = lab
    assert stores.receive_fenced(receiver, "w2", 34, "new") is True
    assert stores.holds(receiver, "new") and not stores.holds(receiver, "old")
    assert stores.receive_fenced(receiver, "w1", 33, "old") is False
    assert rows(run_dir, "document") == [["report-17", "new", "w2", 34]]
    assert rows(run_dir, "applied") == [[1, "w2", 34, "new"]]
    assert rows(run_dir, "refused") == [[1, "w1", 33, 34]]  # with the highest it had
    assert stores.receive_fenced(receiver, "w2", 34, "newer") is True  # the same holder again
    assert rows(run_dir, "applied") == [[1, "w2", 34, "new"], [2, "w2", 34, "newer"]]
    assert not receiver.in_transaction


def test_a_write_is_noted_as_it_lands_once_and_again_only_over_another(lab):
    """A reader's write is looked for at each point of its call and after it: noted the first
    time the document holds it, not again while it still does, again once it lands over
    another's; never while the document holds another body."""
    run_dir, _, receiver = lab
    assert stores.landed(receiver, "w1", 33, "mine") is False
    receiver.execute("UPDATE document SET body='mine', fence=33")
    assert stores.landed(receiver, "w1", 33, "mine") is True
    assert stores.landed(receiver, "w1", 33, "mine") is True
    assert rows(run_dir, "applied") == [[1, "w1", 33, "mine"]]
    assert stores.receive_fenced(receiver, "w2", 34, "theirs") is True
    assert stores.landed(receiver, "w1", 33, "mine") is False
    receiver.execute("UPDATE document SET body='mine', fence=33")
    assert stores.landed(receiver, "w1", 33, "mine") is True
    assert [row[1:3] for row in rows(run_dir, "applied")] == [["w1", 33], ["w2", 34], ["w1", 33]]
    assert rows(run_dir, "refused") == []


def test_the_unfenced_receiver_writes_whatever_comes(lab):
    run_dir, _, receiver = lab
    assert stores.receive_unfenced(receiver, "w2", 34, "new") is True
    assert stores.receive_unfenced(receiver, "w1", 33, "old") is True
    assert rows(run_dir, "document") == [["report-17", "old", "w1", 33]]
    assert rows(run_dir, "applied") == [[1, "w2", 34, "new"], [2, "w1", 33, "old"]]
    assert rows(run_dir, "refused") == [] and not receiver.in_transaction


def race(run_dir, receiver, receive, *writes: tuple[str, int]) -> tuple[str, dict]:
    """Each write through `receive`; the word and the numbers the files then give. The
    bodies fall as the writes go ("write 9", "write 8"): only the tokens tell the order."""
    for n, (writer, fence) in enumerate(writes):
        receive(receiver, writer, fence, f"write {9 - n}")
    after = take_snapshot(run_dir, stores.FILES)
    return lease_word(after), race_counts(after)


def test_nobody_wrote(lab):
    run_dir, _, receiver = lab
    counts = {"applied": 0, "refused": 0, "task_fence": 32, "document_fence": 0}
    assert race(run_dir, receiver, stores.receive_fenced) == ("nobody", counts)


def test_one_winner_wrote_once(lab):
    run_dir, tasks, receiver = lab
    stores.CLAIMS["lease"](tasks, "w1", 0, 200, print)
    counts = {"applied": 1, "refused": 0, "task_fence": 33, "document_fence": 33}
    assert race(run_dir, receiver, stores.receive_fenced, ("w1", 33)) == ("one_winner", counts)


def test_a_refused_late_write(lab):
    run_dir, _, receiver = lab
    counts = {"applied": 1, "refused": 1, "task_fence": 32, "document_fence": 34}
    said = race(run_dir, receiver, stores.receive_fenced, ("w2", 34), ("w1", 33))
    assert said == ("refused_late_write", counts)


def test_both_ran_with_rising_or_equal_tokens(lab):
    run_dir, _, receiver = lab
    said = race(run_dir, receiver, stores.receive_fenced, ("w1", 34), ("w1", 34), ("w2", 35))
    assert said[0] == "both_ran" and said[1]["applied"] == 3


def test_a_lost_update_is_a_last_write_under_a_lower_token(lab):
    run_dir, _, receiver = lab
    said = race(run_dir, receiver, stores.receive_unfenced, ("w2", 34), ("w1", 33))
    assert said == (
        "lost_update",
        {"applied": 2, "refused": 0, "task_fence": 32, "document_fence": 33},
    )


def test_a_lower_token_in_the_middle_is_not_a_lost_update(lab):
    run_dir, _, receiver = lab
    said = race(run_dir, receiver, stores.receive_unfenced, ("w2", 34), ("w1", 33), ("w2", 34))
    assert said[0] == "both_ran"


def test_the_lease_words_are_the_catalogues():
    assert list(LEASE_OUTCOMES) == [
        "one_winner",
        "both_ran",
        "lost_update",
        "refused_late_write",
        "nobody",
        "failed",
    ]
    assert LEASE_OUTCOMES["lost_update"].startswith(
        "both wrote, and the stale worker's write landed last"
    )


# --- lesson 8's orders -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("charges", "receipt", "error", "word"),
    [
        (2, 7, None, "duplicate"),
        (3, None, "TimeoutError: late", "duplicate"),
        (1, 7, None, "charged_once"),
        (1, None, "ConnectionResetError: reset", "charged_run_failed"),
        (0, None, "CardDeclined: insufficient funds", "declined"),
        (0, None, "TimeoutError: no CardDeclined", "failed"),
        (0, 7, None, "never_charged"),  # its receipt is another order's charge
        (0, None, None, "failed"),
    ],
)
def test_an_orders_word_comes_from_its_new_charges_and_how_its_run_ended(
    charges, receipt, error, word
):
    assert order_outcome(charges, receipt, error) == word


def test_the_order_words_are_the_views_codes():
    assert ORDER_OUTCOMES == (
        "charged_once",
        "duplicate",
        "charged_run_failed",
        "never_charged",
        "declined",
        "failed",
    )


# --- lesson 5's call with an unknown outcome -------------------------------------------------


@pytest.mark.parametrize(
    ("tickets", "status", "first_unknown", "word"),
    [
        (2, "done", False, "duplicate"),
        (2, None, True, "duplicate"),
        (1, None, False, "unresolved"),
        (1, "unknown", True, "unresolved"),
        (0, "unknown", False, "unresolved"),
        (1, "failed", False, "orphan"),
        (0, "failed", True, "consistent"),
        (0, "done", False, "lost"),
        (0, "done", True, "lost"),
        (1, "done", True, "unknown-resolved"),
        (1, "done", False, "consistent"),
    ],
)
def test_a_calls_word_comes_from_the_tickets_and_the_callers_checkpoint(
    tickets, status, first_unknown, word
):
    assert call_word(tickets, status, first_unknown) == word


def test_the_call_words_and_jepsen_types_are_the_catalogues():
    assert list(CALL_OUTCOMES) == [
        "consistent",
        "unknown-resolved",
        "duplicate",
        "orphan",
        "lost",
        "unresolved",
        "failed",
    ]
    assert CALL_OUTCOMES["orphan"].startswith("a ticket exists that the workflow believes")
    assert list(JEPSEN_TYPES) == ["ok", "fail", "info"]
    assert JEPSEN_TYPES["info"]


def test_each_invoke_is_one_op_completed_by_its_own_process_only():
    history = [
        {"process": "caller", "type": "invoke", "f": "create", "key": "k", "t_ns": 10},
        {"process": "stranger", "type": "ok", "f": "create", "key": "k", "t_ns": 11},
        {"process": "recovery", "type": "invoke", "f": "read", "key": "k", "t_ns": 20},
        {"process": "recovery", "type": "fail", "f": "read", "error": "404", "t_ns": 25},
        {"process": "recovery", "type": "ok", "f": "read", "value": 9, "t_ns": 26},
        {"process": "recovery", "type": "invoke", "f": "create", "key": "k"},
        {"process": "recovery", "type": "ok", "f": "create", "value": 1},
    ]
    died = "the process died before the answer"
    assert jepsen_ops(history) == [
        {
            "process": "caller",
            "f": "create",
            "key": "k",
            "type": "info",
            "value": None,
            "error": died,
            "start_ns": 10,
            "end_ns": None,
        },
        {
            "process": "recovery",
            "f": "read",
            "key": "k",
            "type": "fail",
            "value": None,
            "error": "404",
            "start_ns": 20,
            "end_ns": 25,
        },
        {
            "process": "recovery",
            "f": "create",
            "key": "k",
            "type": "ok",
            "value": 1,
            "error": None,
            "start_ns": None,
            "end_ns": None,
        },
    ]


# --- lesson 5's outbox ------------------------------------------------------------------------


def outbox_files(run_dir, orders: int, messages: dict[str, int], sent=(), stray: int = 0):
    """The outbox's two files (their own schemas) with `orders` business rows, an outbox row
    per message (marked sent if named in `sent`) and that many effects of it at the consumer,
    each taken into the inbox once; `stray` effects of a message no outbox holds."""
    outbox_stores.create_files(run_dir)
    with contextlib.closing(sqlite3.connect(run_dir / outbox_stores.BUSINESS_FILE)) as db, db:
        for n in range(orders):
            db.execute("INSERT INTO orders(order_key, item) VALUES(?, 'mug')", (f"o{n}",))
        for message in messages:
            db.execute(
                "INSERT INTO outbox(message_id, payload, sent) VALUES(?, 'p', ?)",
                (message, int(message in sent)),
            )
    with contextlib.closing(sqlite3.connect(run_dir / outbox_stores.CONSUMER_FILE)) as db, db:
        effects = [*(m for m, times in messages.items() for _ in range(times)), *["zz"] * stray]
        for message in effects:
            db.execute("INSERT INTO effects(message_id, payload) VALUES(?, 'p')", (message,))
        for message in sorted(set(effects)):
            db.execute("INSERT INTO inbox(subscriber, message_id) VALUES('s', ?)", (message,))
    return take_snapshot(run_dir, outbox_stores.FILES)


@pytest.mark.parametrize(
    ("orders", "messages", "stray", "word"),
    [
        (0, {}, 0, "nothing"),
        (0, {}, 2, "nothing"),  # effects of no message of this outbox
        (1, {}, 0, "lost"),  # an order without its message
        (1, {"m1": 0}, 0, "lost"),
        (1, {"m1": 1}, 0, "consistent"),
        (1, {"m1": 1}, 2, "consistent"),
        (1, {"m1": 2}, 0, "duplicate"),
        (2, {"m1": 1, "m2": 0}, 0, "lost"),
        (2, {"m1": 1, "m2": 3}, 0, "duplicate"),
        (2, {"m1": 2, "m2": 0}, 0, "duplicate"),  # a duplicate is said before a loss
    ],
)
def test_the_outbox_word_goes_message_by_message(tmp_path, orders, messages, stray, word):
    assert outbox_state_word(outbox_files(tmp_path, orders, messages, stray=stray)) == word


def test_the_outbox_counts_are_the_rows_of_each_table(tmp_path):
    after = outbox_files(tmp_path, 2, {"m1": 1, "m2": 2, "m3": 0}, sent=("m1", "m2"), stray=1)
    assert outbox_counts(after) == {"orders": 2, "outbox": 3, "sent": 2, "effects": 4, "inbox": 3}
    assert list(OUTBOX_OUTCOMES) == ["consistent", "duplicate", "lost", "nothing", "failed"]
    assert OUTBOX_OUTCOMES["nothing"]


# --- lesson 7's commit window on Postgres ----------------------------------------------------


@pytest.mark.parametrize(
    ("done", "receipts", "word"),
    [
        (1, 1, "consistent"),
        (1, 0, "lost"),
        (0, 1, "lost"),
        (0, 0, "lost"),
        (1, 2, "duplicate"),
        (0, 3, "duplicate"),
    ],
)
def test_a_postgres_runs_word_comes_from_done_and_its_receipts(done, receipts, word):
    assert outcome_of(done, receipts) == word
    assert outcome_of(done=done, receipts=receipts) == word  # as runs.py calls it
    assert POSTGRES_OUTCOMES == ("consistent", "duplicate", "lost")
