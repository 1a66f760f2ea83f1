"""Lesson 5's judges say exactly what their real runs showed (issue 33: the mutants mutmut left
in workshop/lesson5.py): each strategy's tickets and story after a lost reply; the fault after
which a recovery ends wrong, with its tickets, checkpoint and run; the case in which a consumer
let a message take effect twice or never, with the state at the kill and the run to look in
(a kill after a write to a file beside consumer.db too); and the consumer whose commits the
lab cannot kill apart, or that writes outside its run folder, refused.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from wrong_answers import RIGHT, WRONG

from labkit.workshop import lesson5
from labkit.workshop.lesson5 import idempotent_consumer, predict_tickets, recover_unknown

RECOVERIES, CONSUMERS = WRONG["lesson5.recover_unknown"], WRONG["lesson5.idempotent_consumer"]
CALLER_KILLED = "after caller_killed (the caller is killed right after it sent the request): "
MSG = r"msg-[0-9a-f]{8}"


def kill_of(run_dir: str) -> str:
    """Where an outbox run killed its process, from its own results.json."""
    return json.loads((Path(run_dir) / "results.json").read_text())["kill_at"]


def test_each_strategys_tickets_after_a_lost_reply_are_measured_with_their_story():
    measured = lesson5.measure_tickets(["give_up", "new_key"])
    assert [(k, m.value, m.story, m.failure) for k, m in measured.items()] == [
        ("give_up", 1, "Jepsen info, the checkpoint says failed", None),
        ("new_key", 2, "Jepsen info → ok, the checkpoint says done", None),
    ]
    assert [Path(m.run_dir).name for m in measured.values()] == [
        "give_up.reply_lost",
        "new_key.reply_lost",
    ]
    verdict = predict_tickets.check({"new_key": 2, "same_key": 1, "reconcile": 1, "give_up": 2})
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "3 of your 4 predictions match real runs; not these:\ngive_up: you said 2, the real run"
        " gave 1 (Jepsen info, the checkpoint says failed)",
    )
    assert Path(verdict.run_dir).name == "give_up.reply_lost"


def test_a_right_recovery_is_correct_naming_every_fault_it_ran_after():
    verdict = recover_unknown.check(RIGHT["lesson5.recover_unknown"]["retry under the same key"])
    assert (verdict.status, verdict.message) == (
        "correct",
        "after each of caller_killed, service_killed, reply_lost, still_working: one ticket, and"
        " the workflow recorded it",
    )
    assert Path(verdict.run_dir).name == "custom.caller_killed"
    assert sorted(p.name for p in Path(verdict.run_dir).parent.glob("custom.*")) == [
        "custom.caller_killed",
        "custom.reply_lost",
        "custom.service_killed",
        "custom.still_working",
    ]


def test_a_recovery_that_ends_wrong_is_told_its_tickets_checkpoint_and_outcome():
    verdict = recover_unknown.check(RECOVERIES["a new key"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"{CALLER_KILLED}2 tickets at the service and the checkpoint says done: duplicate (two or"
        " more tickets for one operation: a retry ran the effect again)",
    )
    assert Path(verdict.run_dir).name == "custom.caller_killed"
    verdict = recover_unknown.check(RECOVERIES["give up, saying why"][0])
    assert verdict.message == (
        f"{CALLER_KILLED}1 ticket at the service and the checkpoint says failed: orphan (a ticket"
        " exists that the workflow believes failed: nobody follows it up, and a later retry"
        " would make a second)"
    )


def test_a_recovery_that_records_another_ticket_than_the_services_is_refused():
    verdict = recover_unknown.check(RECOVERIES["the right call, a made-up ticket"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "after service_killed (the service is killed after its commit, before its reply): the"
        " workflow recorded ticket 1, but the service holds #2",
    )
    assert Path(verdict.run_dir).name == "custom.service_killed"


def test_the_right_consumer_is_correct_counting_the_commits_it_was_killed_after():
    right = RIGHT["lesson5.idempotent_consumer"]
    verdict = idempotent_consumer.check(right["the inbox, written as the solution is, and a print"])
    assert (verdict.status, verdict.message) == (
        "correct",
        "each message took effect once: delivered once each, redelivered after the relay was"
        " killed (beside another message with the same payload), and redelivered after the"
        " consumer was killed right after each commit, each write and each file made or removed"
        " in the run folder in each delivery (2 in all, the last of each the lab's own COMMIT"
        " to consumer.db)",
    )
    assert kill_of(verdict.run_dir) == "none"  # the clean run's


def test_a_consumer_that_never_applies_is_told_so_in_the_run_with_two_messages():
    verdict = idempotent_consumer.check(CONSUMERS["never applies"][0])
    assert verdict.status == "incorrect"
    assert re.fullmatch(
        rf"two different messages \(({MSG}), {MSG}\), each delivered once; consumer.db holds 0"
        r" effect rows for \1, not 1",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "none"


def test_a_consumer_that_applies_a_redelivery_again_is_told_the_relays_kill():
    verdict = idempotent_consumer.check(CONSUMERS["the effect every time, a print beside it"][0])
    assert verdict.status == "incorrect"
    assert re.fullmatch(
        rf"the relay was killed after delivering ({MSG}) and before marking it sent, so a fresh"
        rf" relay delivered it again, and then {MSG}, another message with the same payload \(3"
        r" deliveries in all\); consumer.db holds 2 effect rows for \1, not 1",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "after_deliver"


def test_a_consumer_killed_between_its_own_commits_is_told_what_the_kill_left():
    verdict = idempotent_consumer.check(
        CONSUMERS["the inbox committed, then the effect (issue 28, item 2)"][0]
    )
    assert verdict.status == "incorrect"
    assert re.fullmatch(
        rf"the consumer was killed right after commit 1 \(consumer.db\) of its delivery of ({MSG}),"
        r" before it answered the relay \(consumer.db then held 0 effect rows and 1 inbox rows\),"
        r" so a fresh relay delivered it again \(3 deliveries in all\); consumer.db holds 0"
        r" effect rows for \1, not 1",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "after commit 1 (consumer.db)"


def test_a_consumer_whose_commits_cannot_be_killed_apart_is_refused():
    """Another process commits twice to consumer.db while the consumer's transaction is
    closed: the watch sees two commits at once, no point between them to kill at."""
    two_commits_at_once = (
        "def consume(db, subscriber, message_id, payload):\n"
        "    import subprocess, sys\n"
        '    db.execute("COMMIT")\n'
        "    write = (\n"
        "        \"import sqlite3; c = sqlite3.connect('consumer.db', isolation_level=None);\"\n"
        "        \" c.execute('CREATE TABLE IF NOT EXISTS notes(x)');\"\n"
        "        \" c.execute('INSERT INTO notes VALUES(1)')\"\n"
        "    )\n"
        '    subprocess.run([sys.executable, "-c", write], check=True)\n'
        '    db.execute("BEGIN IMMEDIATE")\n'
        "    new = db.execute(\n"
        '        "INSERT OR IGNORE INTO inbox(subscriber, message_id) VALUES(?, ?)",\n'
        "        (subscriber, message_id),\n"
        "    ).rowcount\n"
        "    if new:\n"
        '        db.execute("INSERT INTO effects(message_id, payload) VALUES(?, ?)",'
        " (message_id, payload))\n"
    )
    verdict = idempotent_consumer.check(two_commits_at_once)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "the lab could not kill your consumer after each of its commits apart (consumer.db):"
        " keep SQLite's own journal and commit one transaction after another",
    )
    assert kill_of(verdict.run_dir) == "none"


def test_a_strategys_run_that_failed_by_itself_gives_no_verdict(monkeypatch):
    why = "caller worker timed out after 10 s"
    right = {"new_key": 2, "same_key": 1, "reconcile": 1, "give_up": 1}

    def run_specs(specs: list) -> list[SimpleNamespace]:  # same_key's run failed by itself
        return [
            SimpleNamespace(
                spec=spec,
                tickets=[(n,) for n in range(right[spec.strategy])],
                ops=[{"type": "info"}],
                status="done",
                run_dir=f"/runs/{spec.strategy}",
                failure=why if spec.strategy == "same_key" else None,
            )
            for spec in specs
        ]

    monkeypatch.setattr(lesson5, "run_specs", run_specs)
    verdict = predict_tickets.check(right)
    assert (verdict.status, verdict.run_dir) == ("no verdict", "/runs/same_key"), str(verdict)
    assert why in verdict.message


def test_an_outbox_run_that_failed_by_itself_gives_no_verdict_naming_the_run(monkeypatch):
    """Real runs, each case's in turn told it failed by itself (a worker's timeout): no verdict,
    whichever case it was, and its own folder."""
    why = "relay worker timed out after 60 s"
    real = lesson5.execute_outbox
    right = RIGHT["lesson5.idempotent_consumer"]["look for the message's effect first"]
    said = {}
    for kill_at, run in [
        ("none", "the run with two messages"),
        ("after_deliver", "the run with a redelivery"),
        ("after commit 1 (consumer.db)", "the run with the consumer killed"),
    ]:

        def execute_outbox(spec, failing=kill_at):  # noqa: ANN001, ANN202 - its stand-in
            result = real(spec)
            return replace(result, failure=why) if spec.kill_at == failing else result

        monkeypatch.setattr(lesson5, "execute_outbox", execute_outbox)
        verdict = idempotent_consumer.check(right)
        assert kill_of(verdict.run_dir) == kill_at
        said[run] = (verdict.status, verdict.message)
    assert said == {
        run: (
            "no verdict",
            f"{run} failed ({why}), so it says nothing about your answer: check again",
        )
        for run in said
    }


def test_a_consumer_under_another_name_runs_and_one_that_commits_is_told_what_the_lab_does():
    right = RIGHT["lesson5.idempotent_consumer"]["look for the message's effect first"]
    verdict = idempotent_consumer.check(right.replace("def consume(", "def apply_once("))
    assert verdict.status == "correct", str(verdict)
    commits = CONSUMERS["committed by itself at the end (issue 28, item 8)"][0]
    verdict = idempotent_consumer.check(commits)
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "the lab runs your consumer inside the delivery's transaction and commits it once your"
        " function returns: do not commit or roll back inside it (the lab's own code failed"
        " after yours returned: sqlite3.OperationalError: cannot commit - no transaction is"
        " active)",
    )
    assert kill_of(verdict.run_dir) == "none"


def test_a_consumer_keyed_by_the_payload_loses_the_message_redelivered_beside_its_twin():
    verdict = idempotent_consumer.check(
        CONSUMERS["an inbox keyed by the payload (issue 28, item 3)"][0]
    )
    assert verdict.status == "incorrect"
    assert re.fullmatch(
        rf"the relay was killed after delivering {MSG} and before marking it sent, so a fresh"
        rf" relay delivered it again, and then ({MSG}), another message with the same payload"
        r" \(3 deliveries in all\); consumer.db holds 0 effect rows for \1, not 1",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "after_deliver"


def test_a_recovery_that_returns_what_the_workflow_cannot_record_is_told_what_it_records():
    verdict = recover_unknown.check(RECOVERIES["the look-up's answer wrapped in a dict"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "the workflow records what your recovery returns in its checkpoint: a ticket id the"
        " service gave, or None (the lab's own code failed after yours returned:"
        " sqlite3.ProgrammingError: Error binding parameter 4: type 'dict' is not supported)",
    )
    assert Path(verdict.run_dir).name == "custom.caller_killed"


def test_a_recovery_run_that_failed_by_itself_gives_no_verdict_naming_its_fault(monkeypatch):
    why = "service worker timed out after 10 s"
    real = lesson5.run_specs

    def run_specs(specs: list) -> list:  # reply_lost's run told it failed by itself
        return [replace(r, failure=why) if r.spec.fault == "reply_lost" else r for r in real(specs)]

    monkeypatch.setattr(lesson5, "run_specs", run_specs)
    verdict = recover_unknown.check(RIGHT["lesson5.recover_unknown"]["retry under the same key"])
    assert (verdict.status, verdict.message) == (
        "no verdict",
        f"the run with reply_lost failed ({why}), so it says nothing about your answer: check"
        " again",
    )
    assert Path(verdict.run_dir).name == "custom.reply_lost"


def test_a_consumer_that_commits_apart_only_in_its_second_delivery_is_killed_there():
    """Every delivery's consumer is killed after each of its commits, not the first's alone: a
    consumer that commits its inbox row apart only once the inbox holds another message loses
    the second message's effect when killed between (it was judged correct)."""
    wrong = "the inbox committed first only once it holds another message (the second delivery)"
    verdict = idempotent_consumer.check(CONSUMERS[wrong][0])
    assert verdict.status == "incorrect", str(verdict)
    assert re.fullmatch(
        rf"the consumer was killed right after commit 1 \(consumer.db\) of its delivery of"
        rf" {MSG}, before it answered the relay \(consumer.db then held 1 effect rows and 2"
        r" inbox rows\), so a fresh relay delivered it again \(3 deliveries in all\);"
        rf" consumer.db holds 0 effect rows for {MSG}, not 1",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "after commit 1 (consumer.db)"


def test_a_consumer_that_keeps_its_ids_in_a_file_beside_consumer_db_is_killed_after_that_write():
    """What it has seen is out of the delivery's transaction. Killed as the file is made, still
    empty, the redelivery fails on it, in the reader's own line: a wrong answer, not an error
    of theirs (killed after its bytes, the message would be seen and never applied)."""
    beside = CONSUMERS["the ids kept in a JSON file beside consumer.db"][0]
    verdict = idempotent_consumer.check(beside)
    assert verdict.status == "incorrect", str(verdict)
    assert re.fullmatch(
        rf"the consumer was killed right after write 1 \(processed.json\) of its delivery of"
        rf" {MSG}, before it answered the relay \(consumer.db then held 0 effect rows and 0"
        r" inbox rows\), so a fresh relay delivered it again \(2 deliveries in all\); then your"
        r" consumer failed on that redelivery: your code raised json.decoder.JSONDecodeError:"
        r" Expecting value: line 1 column 1 \(char 0\), at line 4: done = json.load\(open\(path\)\)"
        r" if os.path.exists\(path\) else \[\]. A redelivered message must take effect once, not"
        r" end in an error",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "after write 1 (processed.json)"
    assert (Path(verdict.run_dir) / "processed.json").read_bytes() == b""  # as the kill left it


def test_a_consumer_that_marks_a_message_with_an_empty_file_is_killed_after_it_is_made():
    """No byte is written to an empty marker, yet it is a state a kill leaves: killed between
    the marker and the lab's COMMIT, the redelivery finds it and skips the effect (it was
    judged correct)."""
    marker = CONSUMERS["an empty marker file per message, made before the effect"][0]
    verdict = idempotent_consumer.check(marker)
    assert verdict.status == "incorrect", str(verdict)
    said = re.fullmatch(
        rf"the consumer was killed right after write 1 \(seen-({MSG})\) of its delivery of \1,"
        r" before it answered the relay \(consumer.db then held 0 effect rows and 0 inbox rows\),"
        r" so a fresh relay delivered it again \(3 deliveries in all\); consumer.db holds 0"
        r" effect rows for \1, not 1",
        verdict.message,
    )
    assert said, verdict.message
    lost = said[1]  # the run's own message id: the point is named as the killed run named it
    with closing(sqlite3.connect(Path(verdict.run_dir) / "consumer.db")) as db:
        effects = db.execute("SELECT message_id FROM effects").fetchall()
    assert (Path(verdict.run_dir) / f"seen-{lost}").stat().st_size == 0
    assert lost not in [row[0] for row in effects]


def test_a_consumer_that_writes_a_log_beside_consumer_db_is_killed_after_it_and_is_right():
    """A write beside consumer.db is a kill point, not a fault: a log of each delivery after
    the inbox row changes nothing a redelivery sees."""
    logged = "the inbox, and a log of each delivery beside consumer.db"
    verdict = idempotent_consumer.check(RIGHT["lesson5.idempotent_consumer"][logged])
    assert (verdict.status, verdict.message) == (
        "correct",
        "each message took effect once: delivered once each, redelivered after the relay was"
        " killed (beside another message with the same payload), and redelivered after the"
        " consumer was killed right after each commit, each write and each file made or removed"
        " in the run folder in each delivery (5 in all, the last of each the lab's own COMMIT"
        " to consumer.db)",
    )


def test_a_consumer_that_writes_outside_its_run_folder_is_refused():
    """A kill there cannot be judged: every run would find what the runs before it left."""
    outside = CONSUMERS["the ids kept in a JSON file outside the run folder, in the runs' own"]
    verdict = idempotent_consumer.check(outside[0])
    written = Path(verdict.run_dir).resolve().parent / "processed.json"
    assert (verdict.status, verdict.message) == (
        "incorrect",
        f"your consumer wrote outside its run folder ({written}): the lab cannot judge a kill"
        " there, since every run would find what the runs before it left. Keep what your"
        " consumer has taken in inside consumer.db, in the delivery's transaction",
    )
    assert kill_of(verdict.run_dir) == "none"


def test_a_consumer_that_applies_another_payload_is_told_what_its_effect_holds():
    """Each message took effect once, but not as itself (it was judged correct: the check
    counted effect rows and never read them); the same JSON written another way is the same."""
    verdict = idempotent_consumer.check(
        CONSUMERS["the inbox, and the subscriber's name applied for the payload"][0]
    )
    assert verdict.status == "incorrect", str(verdict)
    assert re.fullmatch(
        rf"two different messages \(({MSG}), {MSG}\), each delivered once; consumer.db's effect"
        r" row for \1 holds the payload 'shipping', not the message's"
        r""" '\{"order_key": "order-17", "item": "sku-4711"\}': apply the message you were given""",
        verdict.message,
    ), verdict.message
    assert kill_of(verdict.run_dir) == "none"
    right = RIGHT["lesson5.idempotent_consumer"]
    verdict = idempotent_consumer.check(right["the payload applied as JSON with its keys sorted"])
    assert verdict.status == "correct", str(verdict)


def test_a_recovery_that_only_looks_again_is_told_the_work_still_in_flight_landed_after_it():
    """Not found yet is not never: the service still working finishes after the recovery has
    ended (it was judged correct: the held work landed as soon as the first look-up was
    answered, and the second look-up found it)."""
    verdict = recover_unknown.check(RECOVERIES["look the key up until it is found"][0])
    assert (verdict.status, verdict.message) == (
        "incorrect",
        "after still_working (the caller's timeout fires while the service is still working): 1"
        " ticket at the service and the checkpoint says failed: orphan (a ticket exists that the"
        " workflow believes failed: nobody follows it up, and a later retry would make a second)",
    )
    assert Path(verdict.run_dir).name == "custom.still_working"
