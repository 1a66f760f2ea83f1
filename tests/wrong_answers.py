"""The catalogue of answers every exercise's judge is tested against (tests/test_exercises.py):
WRONG, each bug its lesson names and the natural wrong guesses, must be judged "incorrect",
with a fragment of the message that says why; RIGHT, other correct answers than the solution
(and natural forms of it), must be judged "correct". A new exercise joins both.
"""

from __future__ import annotations

import textwrap


def step(body: str, name: str = "my_step") -> str:
    """A step's source from its body (four-space indented lines)."""
    return f"def {name}(control, effect, gate):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


def key(body: str) -> str:
    return "def operation_key(state):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


def beside_the_id(module: str, expression: str) -> str:
    """A key of the operation id and what `expression` (from `module`) returns."""
    return key(f"import {module}\nreturn f\"{{state['operation_id']}}:{{{expression}}}\"")


def green_keyed(expression: str) -> str:
    """Lesson 9's step with its key made of `expression`, committed as the lesson's fix does."""
    return step(
        f"key = {expression}\nwith effect:\n    effect.add_receipt_once(key, PAYLOAD)\n"
        "with control:\n    control.mark_done()",
        "report_step",
    )


def audited(key: str, insert: str) -> str:
    """Lesson 9's fixed step, after an audit row in audit/audit.db (in a folder of the run
    folder) whose column has the constraint `key`, written by `insert` (INSERT, or INSERT OR
    IGNORE)."""
    return step(
        "import os, sqlite3\nos.makedirs('audit', exist_ok=True)\n"
        "audit = sqlite3.connect('audit/audit.db', isolation_level=None)\n"
        f"audit.execute('CREATE TABLE IF NOT EXISTS sent(op_key TEXT{key})')\n"
        f"audit.execute('{insert} INTO sent VALUES(?)', (KEY,))\n"
        "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
        "with control:\n    control.mark_done()",
        "report_step",
    )


LABS_NAME = "the lab keeps that name for its own file at the top of the run folder"


GREEN_BODY = (  # lesson 9's fixed step, and a right one for lesson 2
    "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
    "with control:\n    control.mark_done()"
)


SILENCED = "import sys\nsys.stdout = None\nprint('sending the report')\n"
CLEAN_UP = (  # a step that tidies its folder first
    "import os\nfor name in os.listdir('.'):\n    if name.endswith('.jsonl'):\n"
    "        os.remove(name)\n"
)


def logged_to(name: str, body: str) -> str:
    """`body` after a line appended to the file `name` of the run folder: what it sent."""
    line = "    log.write(json.dumps({'sent': 1}) + '\\n')"
    return f"import json\nwith open({name!r}, 'a') as log:\n{line}\n{body}"


FIVE = ("effect_first/effect", "checkpoint_first/checkpoint", "atomic/in_transaction")
FIVE += ("atomic/committed", "idempotent/effect")


def five(*outcomes: str) -> dict:
    return dict(zip(FIVE, outcomes, strict=True))


def mistaken(wrong: dict) -> tuple[dict, str]:
    """The five right predictions but `wrong`, and what the verdict says of the first."""
    case, said = next(iter(wrong.items()))
    right = five("duplicate", "lost", "consistent", "consistent", "consistent")
    return {**right, **wrong}, f"{case}: you said {said!r}"


BUG_HUNT_KEYED = """
key = {}
with effect:
    effect.add_receipt_once(key, PAYLOAD)
with control:
    control.mark_done()
"""


def sqlite_says(sql: str) -> str:
    """An expression: the one value an in-memory SQLite connection answers to `sql`."""
    return f"__import__('sqlite3').connect(':memory:').execute(\"{sql}\").fetchone()[0]"


def keyed(expression: str) -> str:
    """The bug hunt's step with the key made by `expression`."""
    return step(BUG_HUNT_KEYED.format(expression), "buggy_step")


# A step that notes it sent the receipt in a file beside control.db and effect.db (made by
# `note`), then sends it without the receiver's key, and skips the send when the note is there:
# killed after the note, before the receipt's commit, the retry finds the note and skips it.
NOTED_FIRST = """import os
if not os.path.exists("{path}"):
{note}    effect.add_receipt(KEY, PAYLOAD)
control.mark_done()
"""


def noted_first(path: str, note: str) -> str:
    """The step that makes its note at `path` by `note` (lines) before the receipt."""
    return step(
        NOTED_FIRST.format(path=path, note="".join(f"    {line}\n" for line in note.splitlines()))
    )


# The run folder's parent (the runs' own folder): outside the run folder, in the tests' temp.
BESIDE_THE_RUN = 'os.path.join(os.path.dirname(os.getcwd()), os.path.basename(os.getcwd()) + "{}")'
# The bug hunt's step with a uuid4 key made once and kept in a file at `where`, for retries.
KEY_KEPT_IN = """import os, uuid
path = {where}
if os.path.exists(path):
    key = open(path).read()
else:
    key = f"job-17:save-report:{{uuid.uuid4()}}"
    with open(path, "w") as kept:
        kept.write(key)
with effect:
    effect.add_receipt_once(key, PAYLOAD)
with control:
    control.mark_done()
"""

# A reader's own SQLite connections in the worker (its folder is the run folder).
OWN_CONNECTION_DONE = """import sqlite3
c = sqlite3.connect("control.db")
c.execute("UPDATE progress SET done=1 WHERE id=1")
c.commit()
"""
OWN_CONNECTION_INSERT = """import sqlite3
db = sqlite3.connect("effect.db", isolation_level=None)
db.execute("INSERT INTO receipts(op_key, payload) VALUES(?, ?)", (KEY, PAYLOAD))
"""
IN_A_THREAD = """def write():
{}
import concurrent.futures
with concurrent.futures.ThreadPoolExecutor() as pool:
    pool.submit(write).result()
"""


def in_a_thread(body: str) -> str:
    """`body` run by a function in another thread (its errors come back to the step)."""
    return IN_A_THREAD.format("".join(f"    {line}\n" for line in body.splitlines()))


def tickets_after(new_key: object, same_key: object, reconcile: object, give_up: object) -> dict:
    """Lesson 5's prediction: tickets per strategy after a lost reply."""
    return {"new_key": new_key, "same_key": same_key, "reconcile": reconcile, "give_up": give_up}


def recovery(body: str) -> str:
    """A lesson-5 recovery's source from its body (four-space indented lines)."""
    return "def recover(intent, service):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


def claim(body: str) -> str:
    """A lesson-6 claim's source from its body (four-space indented lines)."""
    return "def claim(db, me, now, lease_ms):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


def receiver(body: str) -> str:
    """A lesson-6 receiver's source from its body (four-space indented lines)."""
    return "def receive(db, writer, fence, body):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


def lease_claim(
    where: str, token: str = "fence+1", back: str = "row[0]", lease: str = ":now+:lease"
) -> str:
    """The one-statement claim with its WHERE, its new token and lease, and what it returns
    changed."""
    return claim(
        f"row = db.execute(\"UPDATE task SET state='claimed', owner=:me, fence={token}, "
        f"lease_until={lease} WHERE id='job-17' AND ({where}) RETURNING fence\", "
        '{"me": me, "now": now, "lease": lease_ms}).fetchone()\n'
        f"return {back} if row else None"
    )


EXPIRED = "state='open' OR (state='claimed' AND lease_until <= :now)"
CLAIM_BY_UPDATE = (  # the conditional claim, its token not returned: a second statement must
    "n = db.execute(\"UPDATE task SET state='claimed', owner=?, fence=fence+1, lease_until=? "
    "WHERE id='job-17' AND (state='open' OR (state='claimed' AND lease_until <= ?))\", "
    "(me, now + lease_ms, now)).rowcount\nif n == 0:\n    return None\n"
)
WRITE = "UPDATE document SET body=?, writer=?, fence=? WHERE id='report-17'"
FENCED_WRITE = f'db.execute("{WRITE} AND fence <= ?", (body, writer, fence, fence))'


def consumer(body: str) -> str:
    """A consumer's source from its body (four-space indented lines)."""
    return "def consume(db, subscriber, message_id, payload):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


EFFECT = (
    'db.execute("INSERT INTO effects(message_id, payload) VALUES(?, ?)", (message_id, payload))'
)
INBOX = (
    'new = db.execute("INSERT OR IGNORE INTO inbox(subscriber, message_id) VALUES(?, ?)",'
    " (subscriber, message_id)).rowcount"
)


# A consumer's run folder, where consumer.db is.
RUN_FOLDER = 'os.path.dirname(db.execute("PRAGMA database_list").fetchone()[2])'
# A consumer that keeps the ids it has seen in processed.json, in `folder`, then applies.
SEEN_IN_JSON = f"""import json, os
path = os.path.join({{folder}}, "processed.json")
done = json.load(open(path)) if os.path.exists(path) else []
if message_id in done:
    return
done.append(message_id)
with open(path, "w") as f:
    json.dump(done, f)
{EFFECT}"""


def applied_with(payload: str) -> str:
    """The consumer with the solution's inbox that applies `payload` (an expression) for the
    message's own."""
    effect = EFFECT.replace("(message_id, payload))", f"(message_id, {payload}))")
    return consumer(f"{INBOX}\nif new:\n    {effect}")


CONSUMER_INBOX_FIRST = f"""{INBOX}
db.execute("COMMIT")
db.execute("BEGIN IMMEDIATE")
if new:
    {EFFECT}"""


def serve(body: str) -> str:
    """A lesson-8 serve's source from its body (four-space indented lines)."""
    return "def serve(graph, inputs, config):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


DRAIN_ON_SIGTERM = (
    "import signal\nfrom langgraph.runtime import RunControl\ncontrol = RunControl()\n"
    "signal.signal(signal.SIGTERM, lambda signum, frame: control.request_drain())"
)


def drained(handler: str, after: str = "return None") -> str:
    """A serve that drains on SIGTERM, ends a drained run with `after`, and adds `handler`
    (an except clause and its body) after the GraphDrained one."""
    return serve(
        f"from langgraph.errors import GraphDrained\n{DRAIN_ON_SIGTERM}\ntry:\n"
        "    return graph.invoke(inputs, config, control=control)\n"
        f"except GraphDrained:\n    {after}\n{handler}"
    )


def plan(policy: object, key: object) -> dict:
    """Lesson 8's payment plan: a retry policy and a key."""
    return {"policy": policy, "key": key}


CHECKLIST = {  # lesson 2's tool checklist, answered right
    "effect_first/idempotent": "no",
    "effect_first/key": "none",
    "effect_first/on_retry": "duplicate",
    "idempotent/idempotent": "yes",
    "idempotent/key": "job-17:save-report:v1",
    "idempotent/on_retry": "original",
    "queue_pop/idempotent": "no",
    "queue_pop/key": "none",
    "queue_pop/on_retry": "next job",
}


def checklist(**changed: object) -> tuple[dict, str]:
    """The right checklist but `changed` (keys "step__question"), and what the verdict says."""
    answers = {k.replace("__", "/"): v for k, v in changed.items()}
    case, said = next(iter(answers.items()))
    return {**CHECKLIST, **answers}, f"{case}: you said {said!r}"


def gate(body: str) -> str:
    """Lesson 3's release gate from its body (four-space indented lines)."""
    return "def release_gate(trial):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


CRASH, REJECTION = 'trial("tickets_after_crash")', 'trial("tickets_after_rejection")'
CHANGED = 'trial("changed_title")'


def pg_step(body: str) -> str:
    """A reader's lesson-7 step: `body` inside `def step(db):`."""
    return "def step(db):\n" + textwrap.indent(body, "    ") + "\n"


PG_DONE = 'db.execute("SELECT done FROM progress WHERE id=1{}")[0][0] == 1'
PG_RECEIPT = 'db.execute("INSERT INTO receipts(op_key, payload) VALUES (%s, %s)", (KEY, PAYLOAD))'
PG_MARK = 'db.execute("UPDATE progress SET done=1 WHERE id=1")'


def pg_one_transaction(lock: str = " FOR UPDATE", first: str = "") -> str:
    """The step as one transaction that reads done with `lock`, after the statement `first`."""
    return pg_step(
        f"with db.transaction():\n{textwrap.indent(first, '    ')}"
        f"    if {PG_DONE.format(lock)}:\n        return\n    {PG_RECEIPT}\n    {PG_MARK}"
    )


def pg_isolated(level: str) -> str:
    """The one-transaction step at an isolation level, with a plain SELECT and no retry."""
    return pg_one_transaction("", f'db.execute("SET TRANSACTION ISOLATION LEVEL {level}")\n')


WRONG: dict[str, dict[str, tuple[object, str]]] = {
    "lesson7.predict_crash": {
        "the client saw an error, so it is not committed": (
            {"commit_flushed": "lost"},
            "commit_flushed: you said 'lost', the real run gave 'kept'",
        ),
        "sent is as good as committed": (
            {"commit_in_flight": "kept"},
            "commit_in_flight: you said 'kept', the real run gave 'lost'",
        ),
        "an open transaction is kept": (
            {"before_commit": "kept"},
            "before_commit: you said 'kept', the real run gave 'lost'",
        ),
        "a crash loses what was answered too": (
            {"after_commit": "lost"},
            "after_commit: you said 'lost', the real run gave 'kept'",
        ),
        "both commits in flight lost": (
            {"commit_in_flight": "lost", "commit_flushed": "lost"},
            "1 of your 2 predictions match real runs",
        ),
        "as words": (
            {"before_commit": "maybe"},
            "one of: kept, lost; not before_commit = 'maybe' (nothing was run)",
        ),
        "a typo in a word": (
            {"after_commit": "kpet"},
            "one of: kept, lost; not after_commit = 'kpet' (nothing was run)",
        ),
        "a typo in a case's name": ({"comit_flushed": "kept"}, "not a case of this exercise"),
    },
    "lesson7.one_transaction": {
        "effect first, in two transactions": (
            pg_step(
                f"if {PG_DONE.format('').replace('== 1', '!= 0')}:\n    return\n"
                "with db.transaction():\n"
                f"    {PG_RECEIPT}\nwith db.transaction():\n    {PG_MARK}"
            ),
            "recovered to done=1 and 2 receipts: duplicate",
        ),
        "checkpoint first": (
            pg_step(
                f"if {PG_DONE.format('')}:\n    return\nwith db.transaction():\n"
                f"    {PG_MARK}\nwith db.transaction():\n    {PG_RECEIPT}"
            ),
            "recovered to done=1 and 0 receipts: lost",
        ),
        "one transaction, no look at done": (
            pg_step(f"with db.transaction():\n    {PG_RECEIPT}\n    {PG_MARK}"),
            "recovered to done=1 and 2 receipts: duplicate",
        ),
        "one transaction, a plain SELECT (BEGIN IMMEDIATE's job undone)": (
            pg_one_transaction(lock=""),
            "two workers running the step at once left 2 receipts",
        ),
        # it never reads done: the judge once said "the second read done=0" all the same
        "one transaction that looks for its receipt, not done, with no lock": (
            pg_step(
                "with db.transaction():\n"
                '    if db.execute("SELECT 1 FROM receipts WHERE op_key=%s", (KEY,)):\n'
                f"        return\n    {PG_RECEIPT}\n    {PG_MARK}"
            ),
            "the second wrote one of its own too, not seeing the first's",
        ),
        "done read before the transaction": (
            pg_step(
                f"if {PG_DONE.format(' FOR UPDATE')}:\n    return\nwith db.transaction():\n"
                f"    {PG_RECEIPT}\n    {PG_MARK}"
            ),
            "two workers running the step at once left 2 receipts",
        ),
        "FOR UPDATE, but done=1 in a second transaction": (
            pg_step(
                f"with db.transaction():\n    if {PG_DONE.format(' FOR UPDATE')}:\n"
                f"        return\n    {PG_RECEIPT}\nwith db.transaction():\n    {PG_MARK}"
            ),
            "recovered to done=1 and 2 receipts: duplicate",
        ),
        "SERIALIZABLE without a retry (issue 28, item 8)": (
            pg_isolated("SERIALIZABLE"),
            "in the run of two workers at once (the first held at 'after read 1'), Postgres"
            " rolled a transaction back (psycopg.errors.SerializationFailure",
        ),
        # both take the share lock and read done=0, each then waits for the other's to write
        # once judged correct: the check counted receipts and never read what they held
        "KEY and PAYLOAD swapped": (
            pg_one_transaction().replace("(KEY, PAYLOAD)", "(PAYLOAD, KEY)"),
            "a run without a kill left a receipt of op_key 'demo-report-17'",
        ),
        "FOR SHARE: a lock both workers can take": (
            pg_one_transaction(" FOR SHARE"),
            "(the first held at 'after read 1'), Postgres rolled a transaction back"
            " (psycopg.errors.DeadlockDetected",
        ),
        "REPEATABLE READ without a retry": (
            pg_isolated("REPEATABLE READ"),
            "so a step that runs at that level needs a retry",
        ),
    },
    "lesson9.green_matrix": {
        "effect first, a receiver without a key check": (
            step(
                "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()"
            ),
            "crash point 1 (after the commit of effect.db",
        ),
        "a uuid4 key": (
            green_keyed("f'job-17:{__import__(\"uuid\").uuid4()}'"),
            "end duplicate: effect.db table receipts holds 2",
        ),
        "a key from time": (green_keyed("f'job-17:{__import__(\"time\").time()}'"), "duplicate"),
        "a key from the date": (
            green_keyed("f'job-17:{__import__(\"datetime\").date.today()}'"),
            "duplicate",
        ),
        "a key from the pid": (green_keyed("f'job-17:{__import__(\"os\").getpid()}'"), "duplicate"),
        "a key from hash() of the payload": (
            green_keyed("f'job-17:save-report:{hash(PAYLOAD)}'"),
            "a recovery a day later, in a new interpreter (a new hash seed) end duplicate",
        ),
        "a key of the month": (
            green_keyed('f\'job-17:save-report:{__import__("time").strftime("%Y-%m")}\''),
            "a recovery in the next month end duplicate",
        ),
        # green in the first minute of an hour: the month's and the year's restarts come at
        # 01:00:00, and the day's kept the minute (it is a day, an hour and a minute later now)
        "a key of the minute alone": (
            green_keyed("__import__('time').strftime('job-17:%M')"),
            "end duplicate: effect.db table receipts holds 2",
        ),
        "a key of the year, from datetime": (
            green_keyed("f'job-17:{__import__(\"datetime\").date.today():%Y}'"),
            "end duplicate",
        ),
        "a key of the day, from SQLite's date('now')": (
            green_keyed("'job-17:' + " + sqlite_says("SELECT date('now')")),
            "a recovery a day later end duplicate",
        ),
        # the month's restart once came an hour into the 1st, local time: in a zone ahead of
        # UTC (Shanghai's), still the month before in UTC, where SQLite's 'now' is
        "a key of the UTC month, from SQLite's strftime": (
            green_keyed("'job-17:' + " + sqlite_says("SELECT strftime('%Y-%m', 'now')")),
            "a recovery in the next month end duplicate",
        ),
        # and the year's on January 1st: in 2026 and 2027 still in the ISO year before
        "a key of the ISO year": (
            green_keyed("f'job-17:{__import__(\"datetime\").date.today().isocalendar()[0]}'"),
            "a recovery in the next year end duplicate",
        ),
        # a folder of the run folder was once no state: its duplicates went unseen
        "a log line appended in a folder of the run folder": (
            step(
                "import os\nos.makedirs('logs', exist_ok=True)\n"
                "with open('logs/sent.log', 'a') as log:\n    log.write('report 17 sent\\n')\n"
                "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "end duplicate: logs/sent.log holds 2 where the run without a crash left 1",
        ),
        # a name the lab gives its own files at the top of the run folder, once taken for the
        # lab's anywhere: its lines were no state and had no crash point
        "a trace line appended in a folder of the run folder, to logs/trace.jsonl": (
            step(
                "import json, os\nos.makedirs('logs', exist_ok=True)\n"
                "with open('logs/trace.jsonl', 'a') as log:\n"
                "    log.write(json.dumps({'sent': 'report 17'}) + '\\n')\n"
                "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "end duplicate: logs/trace.jsonl holds 2 where the run without a crash left 1",
        ),
        # a worker's output comes as a pair (.stdout and .stderr): a lone app.stdout is the run's
        "a log of what it sent, appended to app.stdout at the top of the run folder": (
            step(logged_to("app.stdout", GREEN_BODY), "report_step"),
            "end duplicate: app.stdout holds 2 where the run without a crash left 1",
        ),
        "an audit row without a key, in a SQLite file in a folder of the run folder": (
            audited("", "INSERT"),
            "end duplicate: audit/audit.db table sent holds 2",
        ),
        # an empty marker: once no crash point of its own, refused as writes not crashed apart
        "an empty marker that it sent, made before the receipt": (
            step(
                "import os\nif os.path.exists('sent.flag'):\n    with control:\n"
                "        control.mark_done()\n    return\nopen('sent.flag', 'w').close()\n"
                "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "a crash at crash point 1 (after the write of sent.flag; your line 7: open('sent.flag',"
            " 'w').close()) and a recovery at once end lost",
        ),
        # once the lab's own by its dot: no crash point, left out of every crash state
        "an empty dot-file marker that it sent, made before the receipt": (
            step(
                "import os\nif os.path.exists('.sent'):\n    with control:\n"
                "        control.mark_done()\n    return\nopen('.sent', 'w').close()\n"
                "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "a crash at crash point 1 (after the write of .sent; your line 7: open('.sent', 'w')"
            ".close()) and a recovery at once end lost",
        ),
        # its file dropped unclosed: once no crash point, refused as writes not crashed apart
        "a log line appended, its file never closed": (
            step(
                "open('sent.log', 'a').write('report 17 sent\\n')\n"
                "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "(after the write of sent.log; your line 2: open('sent.log', 'a')",
        ),
        # aiosqlite commits in a thread of its own: no line of the reader's is on its stack
        "an INSERT without a key, through aiosqlite": (
            step(
                "import asyncio, aiosqlite\nasync def send():\n"
                "    async with aiosqlite.connect('effect.db') as db:\n"
                "        await db.execute('INSERT INTO receipts(op_key, payload) VALUES(?, ?)',"
                " (KEY, PAYLOAD))\n        await db.commit()\nasyncio.run(send())\n"
                "with control:\n    control.mark_done()",
                "report_step",
            ),
            "a crash at crash point 1 (after the commit of effect.db) and a recovery at once end"
            " duplicate",
        ),
        "INSERT OR IGNORE, where no unique index ignores anything": (
            step(
                "with effect:\n    effect.db.execute('INSERT OR IGNORE INTO receipts(op_key,"
                " payload) VALUES(?, ?)', (KEY, PAYLOAD))\nwith control:\n    control.mark_done()",
                "report_step",
            ),
            "and a recovery at once end duplicate: effect.db table receipts holds 2",
        ),
        "the key and the payload swapped": (
            green_keyed("KEY").replace("(key, PAYLOAD)", "(PAYLOAD, key)"),
            "receipts [[1, 'demo-report-17', 'job-17:save-report:v1']]: it must save one receipt",
        ),
        # once an IndexError of the judge's: the payload was read as the row's third value
        "the receipts table made again, keyed, with two columns": (
            step(
                "effect.db.execute('DROP TABLE receipts')\n"
                "effect.db.execute('CREATE TABLE receipts(op_key TEXT PRIMARY KEY,"
                " payload TEXT)')\n"
                "with effect:\n    effect.db.execute('INSERT OR IGNORE INTO receipts VALUES(?, ?)',"
                " (KEY, PAYLOAD))\nwith control:\n    control.mark_done()",
                "report_step",
            ),
            "receipts [['job-17:save-report:v1', 'demo-report-17']]: it must save one receipt",
        ),
        # one `with` for both is no one transaction: control, the last entered, commits first
        "both stores in one with, effect first": (
            step(
                "with effect, control:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
                "    control.mark_done()",
                "report_step",
            ),
            "(after the commit of control.db; your line 2: with effect, control:) and a recovery"
            " at once end lost",
        ),
        "commit before the effect": (
            step(
                "with control:\n    control.mark_done()\n"
                "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "end lost: effect.db table receipts holds 0",
        ),
        "no receipt at all": (
            step("with control:\n    control.mark_done()"),
            "it must save one receipt",
        ),
    },
    "lesson1.find_the_window": {
        "the duplicate's point": ({"effect"}, "killed at effect, recovery left done=1 and 1"),
        "before any write": ({"start"}, "killed at start"),
        "both commits": ({"checkpoint", "effect"}, "killed at effect"),
        "every point": ({"start", "checkpoint", "effect"}, "killed at start"),
        "nowhere": (set(), "your set leaves out one or more points where a kill loses"),
        "not a kill point": ({"commit"}, "not a kill point of checkpoint_first: ['commit']"),
        "a bare word": ("effect", "killed at effect"),
        "a list in a list": ([["checkpoint"]], "each kill point is a word"),
    },
    "lesson2.predict_five_cases": {
        "all consistent": (five(*["consistent"] * 5), "effect_first/effect: you said"),
        "duplicate and lost swapped": mistaken(
            {"checkpoint_first/checkpoint": "duplicate", "effect_first/effect": "lost"}
        ),
        "the open transaction survives": mistaken({"atomic/in_transaction": "lost"}),
        "the key does not help": mistaken({"idempotent/effect": "duplicate"}),
        "committed means repeated": mistaken({"atomic/committed": "duplicate"}),
        "a kill loses everything": (five(*["lost"] * 5), "effect_first/effect: you said 'lost'"),
        "not an outcome": (
            five("x", "two", "lost", "unfinished", "consistent"),
            "each prediction is one of: consistent, duplicate, lost; not effect_first/effect = 'x'",
        ),
    },
    "lesson2.safe_step": {
        "effect first, without with blocks": (
            step("effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"),
            "killed at `after commit 1 (effect.db)`",
        ),
        "checkpoint first": (
            step(
                "with control:\n    control.mark_done()\nwith effect:\n"
                "    effect.add_receipt(KEY, PAYLOAD)"
            ),
            "killed at `after commit 1 (control.db)`, when the files held done=1 and 0 receipts",
        ),
        "checkpoint first, without with blocks (issue 11)": (
            step("control.mark_done()\neffect.add_receipt(KEY, PAYLOAD)"),
            "recovery left done=1 and 0 receipts (lost)",
        ),
        "mark_done inside `with effect:` (issue 11)": (
            step(
                "with effect:\n    control.mark_done()\n    effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "killed at `after commit 1 (control.db)`",
        ),
        "checkpoint first with the receiver's key": (
            step(
                "with control:\n    control.mark_done()\nwith effect:\n"
                "    effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "(lost)",
        ),
        "a new key per attempt": (
            step(
                "import uuid\nwith effect:\n    effect.add_receipt_once(str(uuid.uuid4()), PAYLOAD)"
                "\nwith control:\n    control.mark_done()"
            ),
            "recovery left done=1 and 2 receipts (duplicate)",
        ),
        # the recovery runs with another hash seed, as after a real restart, though forked
        "a key from hash() of the payload": (
            step(
                "with effect:\n    effect.add_receipt_once(f'job-17:{hash(PAYLOAD)}', PAYLOAD)"
                "\nwith control:\n    control.mark_done()"
            ),
            "recovery left done=1 and 2 receipts (duplicate)",
        ),
        "raw SQL through a cursor, checkpoint first": (
            step(
                'control.db.cursor().execute("UPDATE progress SET done=1 WHERE id=1")\n'
                "effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "(lost)",
        ),
        "raw INSERT without the key's contract": (
            step(
                'effect.db.executescript("INSERT INTO receipts(op_key, payload) '
                "VALUES('job-17:save-report:v1', 'demo-report-17');\")\ncontrol.mark_done()"
            ),
            "the recovery failed: your code raised sqlite3.IntegrityError",
        ),
        "a new payload per attempt": (
            step(
                "import time\nwith effect:\n"
                "    effect.add_receipt_once(KEY, f'report-{time.time_ns()}')"
                "\nwith control:\n    control.mark_done()"
            ),
            "it must save one receipt of PAYLOAD",
        ),
        "a key of the month (a day later is the same month, most days)": (
            step(
                "import time\nkey = f'job-17:{time.strftime(\"%Y-%m\")}'\nwith effect:\n"
                "    effect.add_receipt_once(key, PAYLOAD)\nwith control:\n    control.mark_done()"
            ),
            "recovery left done=1 and 2 receipts (duplicate)",
        ),
        "two receipts, no crash needed": (
            step(
                "effect.add_receipt_once(KEY, PAYLOAD)\neffect.add_receipt_once('other', PAYLOAD)"
                "\ncontrol.mark_done()"
            ),
            "run once without a crash, the step left done=1 and 2 receipts",
        ),
        "never says done": (
            step("with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)"),
            "run once without a crash, the step left done=0 and 1 receipt",
        ),
        "the wrong payload": (
            step("effect.add_receipt_once(KEY, 'report')\ncontrol.mark_done()"),
            "it must save one receipt of PAYLOAD",
        ),
        "done through your own connection, checkpoint first": (
            step(OWN_CONNECTION_DONE + "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)"),
            "(lost)",
        ),
        "a plain INSERT through your own connection": (
            step(OWN_CONNECTION_INSERT + "control.mark_done()"),
            "the recovery failed: your code raised sqlite3.IntegrityError",
        ),
        "a plain INSERT in a thread pool": (
            step(in_a_thread(OWN_CONNECTION_INSERT) + "control.mark_done()"),
            "the recovery failed: your code raised sqlite3.IntegrityError",
        ),
        "done in a thread of its own, checkpoint first": (
            step(in_a_thread(OWN_CONNECTION_DONE) + "effect.add_receipt_once(KEY, PAYLOAD)"),
            "(lost)",
        ),
        "both files through your own connections": (
            step(OWN_CONNECTION_INSERT + OWN_CONNECTION_DONE),
            "the recovery failed: your code raised sqlite3.IntegrityError",
        ),
        "the watch switched off, checkpoint first": (
            step(
                "control.db.set_trace_callback(print)\neffect.db.set_trace_callback(print)\n"
                "with control:\n    control.mark_done()\n"
                "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "(lost)",
        ),
        "the watch switched off, effect first": (
            step(
                "control.db.set_trace_callback(None)\neffect.db.set_trace_callback(None)\n"
                "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\n"
                "with control:\n    control.mark_done()"
            ),
            "the recovery failed: your code raised sqlite3.IntegrityError",
        ),
        "the receipt written by DDL only": (
            step(
                'effect.db.executescript("CREATE TABLE r2 AS SELECT 1 AS id, '
                "'job-17:save-report:v1' AS op_key, 'demo-report-17' AS payload; "
                'DROP TABLE receipts; ALTER TABLE r2 RENAME TO receipts;")\n'
                "control.mark_done()"
            ),
            "the recovery failed",
        ),
        # WAL mode is no fault (its commits are crash points, found in the -wal file): the
        # order of the writes is, as in rollback mode
        "the effect file in WAL mode, effect first without the receiver's key": (
            step(
                'effect.db.execute("PRAGMA journal_mode=WAL")\n'
                "effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"
            ),
            "killed at `after commit 1 (effect.db)`, when the files held done=0 and 1 receipt",
        ),
        "done in WAL mode through your own connection, checkpoint first": (
            step(
                OWN_CONNECTION_DONE.replace(
                    "c.execute(", 'c.execute("PRAGMA journal_mode=WAL")\nc.execute(', 1
                )
                + "effect.add_receipt_once(KEY, PAYLOAD)"
            ),
            "killed at `after commit 1 (control.db)`, when the files held done=1 and 0 receipts",
        ),
        "an exclusive lock, so the counter counts one commit": (
            step(
                'effect.db.execute("PRAGMA locking_mode=EXCLUSIVE")\n'
                'effect.db.execute("CREATE TABLE notes(x)")\n'
                "effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"
            ),
            "changed in a way SQLite's change counter did not count",
        ),
        "ATTACH beside two commits of an unwatched connection": (
            step(
                "control.db.execute(\"ATTACH 'effect.db' AS e\")\n"
                "Raw = type(control.db).__mro__[-2]  # sqlite3's own Connection class\n"
                'Raw("control.db", isolation_level=None).execute("UPDATE progress SET done=1")\n'
                'Raw("effect.db", isolation_level=None).execute('
                '"INSERT INTO receipts(op_key, payload) VALUES(?, ?)", (KEY, PAYLOAD))'
            ),
            "2 commits to control.db and effect.db that could not be crashed apart",
        ),
        # a note beside the files is a kill point as a commit is: its window is
        # checkpoint-first's, the note taken for done
        "a note that it sent, in a JSON file beside the files, before the receipt": (
            noted_first(
                "sent.json",
                'import json\nwith open("sent.json", "w") as note:\n    json.dump([KEY], note)',
            ),
            "killed at `after write 1 (sent.json)`, when the files held done=0 and 0 receipts"
            " (unfinished), recovery left done=1 and 0 receipts (lost)",
        ),
        "the keys it sent in a SQLite file of its own, before the receipt": (
            step(
                'import sqlite3\nsent = sqlite3.connect("sent.db", isolation_level=None)\n'
                'sent.execute("CREATE TABLE IF NOT EXISTS sent(op_key TEXT PRIMARY KEY)")\n'
                'if sent.execute("INSERT OR IGNORE INTO sent VALUES(?)", (KEY,)).rowcount:\n'
                "    effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"
            ),
            "killed at `after commit 2 (sent.db)`, when the files held done=0 and 0 receipts"
            " (unfinished), recovery left done=1 and 0 receipts (lost)",
        ),
        "a note that it sent, written aside and renamed into place, before the receipt": (
            noted_first(
                "sent.json",
                "import tempfile\n"
                'with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as aside:\n'
                "    aside.write(KEY)\n"
                'os.replace(aside.name, "sent.json")',
            ),
            "killed at `after write 3 (sent.json)`, when the files held done=0 and 0 receipts",
        ),
        "an empty marker that it sent, touched before the receipt": (
            noted_first("sent.flag", 'open("sent.flag", "w").close()'),
            "killed at `after write 1 (sent.flag)`, when the files held done=0 and 0 receipts"
            " (unfinished), recovery left done=1 and 0 receipts (lost)",
        ),
        "an empty dot-file marker, touched before the receipt": (
            noted_first(".sent", 'open(".sent", "w").close()'),
            "killed at `after write 1 (.sent)`, when the files held done=0 and 0 receipts",
        ),
        "a folder made as the marker, before the receipt": (
            noted_first("sent", 'os.mkdir("sent")'),
            "killed at `after write 1 (sent)`, when the files held done=0 and 0 receipts",
        ),
        "a note that it sent, outside the run folder": (
            step(
                f"import os\nnote = {BESIDE_THE_RUN.format('.sent')}\n"
                "if not os.path.exists(note):\n    with open(note, 'w') as sent:\n"
                "        sent.write(KEY)\n    effect.add_receipt(KEY, PAYLOAD)\ncontrol.mark_done()"
            ),
            "your step wrote outside its run folder (",
        ),
    },
    "lesson2.bug_hunt": {
        "uuid1 instead of uuid4": (
            keyed("f\"job-17:{__import__('uuid').uuid1()}\""),
            "recovery left done=1 and 2 receipts (duplicate)",
        ),
        "the time": (
            keyed("f\"job-17:{__import__('time').time()}\""),
            "(duplicate)",
        ),
        "a random number": (
            keyed("str(__import__('random').random())"),
            "(duplicate)",
        ),
        "the worker's pid": (
            keyed("f'job-17:{__import__(\"os\").getpid()}'"),
            "(duplicate)",
        ),
        "the order swapped instead": (
            step(
                "with control:\n    control.mark_done()\nwith effect:\n"
                "    effect.add_receipt_once(KEY, PAYLOAD)",
                "buggy_step",
            ),
            "(lost)",
        ),
        "add_receipt with the fixed key": (
            step(
                "with effect:\n    effect.add_receipt(KEY, PAYLOAD)\nwith control:\n"
                "    control.mark_done()",
                "buggy_step",
            ),
            "IntegrityError",
        ),
        "the parent's pid": (keyed("f\"job-17:{__import__('os').getppid()}\""), "(duplicate)"),
        "today's date": (
            keyed("f\"job-17:{__import__('datetime').date.today()}\""),
            "(duplicate)",
        ),
        "the hour": (keyed("__import__('time').strftime('job-17:%Y-%m-%dT%H')"), "(duplicate)"),
        "the time, to the second": (
            keyed("f\"job-17:{int(__import__('time').time())}\""),
            "(duplicate)",
        ),
        "the environment": (
            keyed("f\"job-17:{sorted(__import__('os').environ.items())}\""),
            "(duplicate)",
        ),
        "SQLite's date('now')": (
            keyed("'job-17:' + " + sqlite_says("SELECT date('now')")),
            "(duplicate)",
        ),
        "the day of SQLite's CURRENT_TIMESTAMP": (
            keyed("'job-17:' + " + sqlite_says("SELECT date(CURRENT_TIMESTAMP)")),
            "(duplicate)",
        ),
        "the host's name": (keyed("'job-17:' + __import__('socket').gethostname()"), "(duplicate)"),
        "the host's address": (
            keyed("'job-17:' + (s := __import__('socket')).gethostbyname(s.gethostname())"),
            "(duplicate)",
        ),
        "the node id": (keyed("f\"job-17:{__import__('uuid').getnode()}\""), "(duplicate)"),
        "a uuid4 made once, kept outside the run folder for the retries": (
            step(KEY_KEPT_IN.format(where=BESIDE_THE_RUN.format(".key")), "buggy_step"),
            "your step wrote outside its run folder (",
        ),
    },
    "lesson3.operation_key": {
        "hash() of the operation id": (
            key('return str(hash(state["operation_id"]))'),
            "before a restart and",
        ),
        "the parent's pid": (beside_the_id("os", "os.getppid()"), "before a restart and"),
        "the pid": (key("import os\nreturn str(os.getpid())"), "before a restart and"),
        "id() of the state": (key("return str(id(state))"), "in one process"),
        "the time": (beside_the_id("time", "time.time()"), "in one process"),
        "the time, to the second": (
            beside_the_id("time", "int(time.time())"),
            "the same request got",
        ),
        "today's date": (
            beside_the_id("datetime", "datetime.date.today()"),
            "the same request got",
        ),
        "random": (key("import random\nreturn str(random.random())"), "in one process"),
        "uuid1": (key("import uuid\nreturn str(uuid.uuid1())"), "in one process"),
        "the thread_id": (key('return "workflow-1"'), "two different requests"),
        "the title": (key('return state["title"]'), "two different requests"),
        "a seeded random": (
            key("import random\nrandom.seed(42)\nreturn str(random.random())"),
            "two different requests",
        ),
        "not a string": (key('return (state["operation_id"], 1)'), "must be a string"),
        "an ordinal per process": (
            "def operation_key(state, _seen={}):\n"
            '    return "op-%d" % _seen.setdefault(state["operation_id"], len(_seen))\n',
            "before a restart and",
        ),
        "the minute, formatted": (
            beside_the_id("time", "time.strftime(':%Y-%m-%d %H:%M')"),
            "the same request got",
        ),
        "ctime": (beside_the_id("time", "time.ctime()"), "the same request got"),
        "the day of the year": (
            beside_the_id("time", "time.localtime().tm_yday"),
            "before a restart and",
        ),
        "gmtime": (beside_the_id("time", "time.gmtime()"), "the same request got"),
        "the month (a day later is the same month, most days)": (
            beside_the_id("time", "time.strftime('%Y-%m')"),
            "the same request got",
        ),
        "the year, from datetime": (
            beside_the_id("datetime", "datetime.date.today().year"),
            "the same request got",
        ),
        "the hour alone": (beside_the_id("time", "time.localtime().tm_hour"), "the same request"),
        "the title beside the id": (
            key("return f\"{state['operation_id']}/{state['title']}\""),
            "the same operation (request-42) with another title got another key",
        ),
        "a digest of the whole state": (
            key(
                "import hashlib, json\n"
                "return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()"
            ),
            "with another title got another key",
        ),
        "a uuid kept in a file beside the run": (
            key(
                "import json, os, uuid\n"
                "keys = json.load(open('keys.json')) if os.path.exists('keys.json') else {}\n"
                "keys.setdefault(state['operation_id'], str(uuid.uuid4()))\n"
                "json.dump(keys, open('keys.json', 'w'))\n"
                "return keys[state['operation_id']]"
            ),
            "in another working folder",
        ),
        "clock_gettime, to the second": (
            beside_the_id("time", "int(time.clock_gettime(time.CLOCK_REALTIME))"),
            "the same request got",
        ),
        "the environment": (
            beside_the_id("os", "sorted(os.environ.items())"),
            "before a restart and",
        ),
        "SQLite's date('now')": (
            key("return state['operation_id'] + ':' + " + sqlite_says("SELECT date('now')")),
            "the same request got",
        ),
        "the day of SQLite's CURRENT_TIMESTAMP": (
            key(
                "return state['operation_id'] + ':' + "
                + sqlite_says("SELECT date(CURRENT_TIMESTAMP)")
            ),
            "the same request got",
        ),
        "the host's name": (
            beside_the_id("socket", "socket.gethostname()"),
            "before a restart and",
        ),
        "the host's address": (
            beside_the_id("socket", "socket.gethostbyname(socket.gethostname())"),
            "before a restart and",
        ),
        "the node id": (beside_the_id("uuid", "uuid.getnode()"), "before a restart and"),
    },
    "lesson3.predict_kills": {
        "one ticket each": (
            {"before_create": 1, "after_create": 1, "paused": 1},
            "before_create: you said 1, the real run gave 2",
        ),
        "two each": ({"before_create": 2, "after_create": 2, "paused": 2}, "after_create: you"),
        "the kill before counts": (
            {"before_create": 3, "after_create": 3, "paused": 2},
            "before_create: you said 3",
        ),
        "paused re-runs too": (
            {"before_create": 2, "after_create": 3, "paused": 3},
            "paused: you said 3",
        ),
        "as text": ({"before_create": "1", "after_create": "3", "paused": "2"}, "you said '1'"),
        "in words": (
            {"before_create": "two", "after_create": 3, "paused": 2},
            "each prediction is a whole number, written in digits; not before_create = 'two'",
        ),
        "the stable key's count": (
            {"before_create": 1, "after_create": 1, "paused": 2},
            "1 of your 3",
        ),
    },
    "lesson2.shortest_ttl": {
        "Stripe's 24 h": (24, "keeping keys 24 h had pruned this one: 2 receipts"),
        "equal to the delay": (30, "keeping keys 30 h had pruned this one: 2 receipts"),
        "an hour to spare": (32, "but so does 31 h"),
        "a week, to be safe": (168, "so 168 h is not the shortest"),
        "in words": ("thirty-one", "a whole number of hours from 1 to 87,840"),
        "none at all": (0, "a whole number of hours"),
        "forever": (10**9, "a whole number of hours"),
        # read as a count, the unit once went unread: 31 minutes was judged 31 h, correct
        "31 minutes": ("31 minutes", "a whole number of hours from 1 to 87,840, such as 12; not"),
        "in days": ("2 days", "give the TTL as a whole number of hours"),
        "in days, in Chinese": ("2 天", "give the TTL as a whole number of hours"),
    },
    "lesson2.tool_checklist": {
        "effect_first's op_key taken for a key": checklist(
            effect_first__key="job-17:save-report:v1"
        ),
        "every step idempotent": checklist(effect_first__idempotent="yes"),
        "the queue pop as a harmless read": checklist(queue_pop__idempotent="yes"),
        "the popped job comes back": checklist(queue_pop__on_retry="original"),
        "the idempotent order repeats": checklist(idempotent__on_retry="duplicate"),
        "the key in capitals": checklist(idempotent__key="JOB-17:SAVE-REPORT:V1"),
        "a number for an answer": (
            {**CHECKLIST, "effect_first/on_retry": 2},
            "each prediction is yes or no, a key (or none), or one of: duplicate, original",
        ),
        "the idempotent receiver's key taken for none (None)": (
            {**CHECKLIST, "idempotent/key": None},
            "idempotent/key: you said 'none', the real run gave 'job-17:save-report:v1'",
        ),
        "a question the checklist does not ask": (
            {**CHECKLIST, "effect_first/exactly_once": "no"},
            "not a case of this exercise",
        ),
    },
    "lesson3.release_gate": {
        "one ticket after the crash is enough": (
            gate(f"return {CRASH} == 1"),
            "released “stable key, review after the ticket”",
        ),
        "zero actions after a rejection is enough": (
            gate(f"return {REJECTION} == 0"),
            "released “fresh UUID, approve then execute”",
        ),
        "the changed title never asked": (
            gate(f"return {CRASH} == 1 and {REJECTION} == 0"),
            "released “title in the key, approve then execute”",
        ),
        "the refusal alone": (
            gate(f'return {CHANGED} == "refused"'),
            "released “stable key, review after the ticket”",
        ),
        "a ticket after a rejection tolerated": (
            gate(f'return {CRASH} == 1 and {REJECTION} <= 1 and {CHANGED} == "refused"'),
            "released “stable key, review after the ticket”",
        ),
        "at most one ticket after the crash": (
            gate(f'return {CRASH} <= 1 and {REJECTION} == 0 and {CHANGED} == "refused"'),
            "released “stable key, approve, marked filed before the ticket”",
        ),
        "the crash never asked": (
            gate(f'return {REJECTION} == 0 and {CHANGED} == "refused"'),
            "released “a UUID kept per process, approve then execute”",
        ),
        "nothing ever ships": (
            gate("return False"),
            "held back “stable key, approve then execute”",
        ),
        "the original ticket taken for a refusal": (
            gate(f'return {CRASH} == 1 and {REJECTION} == 0 and {CHANGED} == "original ticket"'),
            "held back “stable key, approve then execute”",
        ),
    },
    "lesson4.choose_durability": {
        "exit": ("exit", "exit cost 3,000: 3 runs lost"),
        "exit, shouted": ("EXIT", "exit cost 3,000"),
        "async": ("async", "async cost"),
        "not a mode": ("fastest", "not a durability mode; choose one of: sync, async, exit"),
        "two modes": (["sync", "async"], "not a durability mode"),
        "the typo LangGraph accepts": ("syncc", "not a durability mode"),
    },
    "lesson4.predict_sync_trial": {
        "no checkpoint for the input": (
            {"checkpoints": 3, "ledger_lines": 9},
            "checkpoints: you said 3, the real run gave 4",
        ),
        "no repeat": ({"checkpoints": 4, "ledger_lines": 8}, "ledger_lines: you said 8"),
        "c and d twice": ({"checkpoints": 4, "ledger_lines": 10}, "ledger_lines: you said 10"),
        "one per node": ({"checkpoints": 5, "ledger_lines": 9}, "checkpoints: you said 5"),
        "nothing kept": ({"checkpoints": 0, "ledger_lines": 5}, "0 of your 2"),
        "as words": (
            {"checkpoints": "four", "ledger_lines": "9"},
            "a whole number, written in digits; not checkpoints = 'four' (nothing was run)",
        ),
    },
    "lesson5.predict_tickets": {
        "a timeout means nothing happened": (
            tickets_after(1, 1, 1, 0),
            "new_key: you said 1, the real run gave 2",
        ),
        "all one": (tickets_after(1, 1, 1, 1), "new_key: you said 1"),
        "giving up makes none": (tickets_after(2, 1, 1, 0), "give_up: you said 0"),
        "a retry is a retry": (tickets_after(2, 2, 1, 1), "same_key: you said 2"),
        "the look-up creates another": (tickets_after(2, 1, 2, 1), "reconcile: you said 2"),
        "every strategy twice": (tickets_after(2, 2, 2, 2), "1 of your 4 predictions match"),
        "as words": (
            tickets_after("two", 1, 1, 1),
            "a whole number, written in digits; not new_key = 'two' (nothing was run)",
        ),
        "a typo in a case's name": (
            {"new_kye": 2, "same_key": 1, "reconcile": 1, "give_up": 1},
            "not a case of this exercise: ['new_kye']",
        ),
    },
    "lesson5.recover_unknown": {
        "a new key": (
            recovery('return service.create(intent["op_key"] + ":2", intent["title"])'),
            "after caller_killed (the caller is killed right after it sent the request): "
            "2 tickets at the service and the checkpoint says done: duplicate",
        ),
        "give up, saying why": (
            recovery('print("timed out: giving up")\nreturn None'),
            "1 ticket at the service and the checkpoint says failed: orphan",
        ),
        "look up only": (
            recovery('return service.lookup(intent["op_key"])'),
            "the checkpoint says failed: orphan",
        ),
        "a new key when the look-up finds nothing": (
            recovery(
                'found = service.lookup(intent["op_key"])\n'
                'return found or service.create(intent["op_key"] + ":2", intent["title"])'
            ),
            "2 tickets at the service and the checkpoint says done: duplicate",
        ),
        "a key with the time in it": (
            recovery(
                "import time\n"
                'return service.create(f"{intent[\'op_key\']}:{time.time()}", intent["title"])'
            ),
            ": duplicate",
        ),
        # once judged correct: the held work landed as soon as the first look-up was answered
        "look the key up until it is found": (
            recovery(
                "import time\nfor _ in range(10):\n"
                '    found = service.lookup(intent["op_key"])\n'
                "    if found is not None:\n        return found\n    time.sleep(0.1)\nreturn None"
            ),
            "after still_working (the caller's timeout fires while the service is still working):"
            " 1 ticket at the service and the checkpoint says failed: orphan",
        ),
        "look the key up twice, a moment apart": (
            recovery(
                'import time\nfound = service.lookup(intent["op_key"])\nif found is None:\n'
                '    time.sleep(0.2)\n    found = service.lookup(intent["op_key"])\nreturn found'
            ),
            "1 ticket at the service and the checkpoint says failed: orphan",
        ),
        "the right call, a made-up ticket": (
            recovery('service.create(intent["op_key"], intent["title"])\nreturn 1'),
            "the workflow recorded ticket 1, but the service holds #2",
        ),
        "the look-up's answer wrapped in a dict": (
            recovery('return {"ticket": service.lookup(intent["op_key"])}'),
            "the workflow records what your recovery returns in its checkpoint",
        ),
    },
    "lesson6.claim_statement": {
        "SELECT, then UPDATE, the lease checked in Python": (
            claim(
                'state, fence, until = db.execute("SELECT state, fence, lease_until FROM task '
                "WHERE id='job-17'\").fetchone()\n"
                'if state == "done" or (state == "claimed" and now < until):\n    return None\n'
                "db.execute(\"UPDATE task SET state='claimed', owner=?, fence=?, lease_until=? "
                "WHERE id='job-17'\", (me, fence + 1, now + lease_ms))\nreturn fence + 1"
            ),
            "before your statement 2, inside its 200 ms lease; w2 came at 50 ms: "
            "tokens claimed: w1 33, w2 33",
        ),
        "< where the lease has expired at lease_until (issue 28, item 12)": (
            lease_claim("state='open' OR (state='claimed' AND lease_until < :now)"),
            "w2 comes at 200 ms, when now = lease_until, and takes over: "
            "tokens claimed: w1 33, w2 none",
        ),
        "the token not moved on": (
            lease_claim(EXPIRED, token="fence"),
            "tokens claimed: w1 32, w2 none; the receiver applied 1 write(s) and refused 0; the "
            "document ends under token 32: each claim takes the next token",
        ),
        "taken back by the same name": (
            lease_claim(f"{EXPIRED} OR owner=:me"),
            "still held when w2 comes at 50 ms: tokens claimed: w1 33, w2 34",
        ),
        "no lease: open tasks only": (
            lease_claim("state='open'"),
            "past its 200 ms lease: w2 comes at 200 ms, when now = lease_until, and takes over: "
            "tokens claimed: w1 33, w2 none",
        ),
        "a done task taken again": (
            lease_claim("lease_until IS NULL OR lease_until <= :now"),
            "the task is done: tokens claimed: w1 33, w2 34",
        ),
        "the token from before the claim": (
            lease_claim(EXPIRED, back="row[0] - 1"),
            "your claim returned token 32, but the task row holds 33",
        ),
        "a margin for clock skew: lease_until <= now + 50 (review 59)": (
            lease_claim("state='open' OR (state='claimed' AND lease_until <= :now + 50)"),
            "w2 comes at 199 ms, just before lease_until: the lease is still held: tokens "
            "claimed: w1 33, w2 34",
        ),
        "the lease set to lease_ms, not now + lease_ms (review 59)": (
            lease_claim(EXPIRED, lease=":lease"),
            "and takes over: w2 claimed at 200 ms, but the task row's lease runs until 200: a "
            "claim sets lease_until = now + lease_ms, 400 here",
        ),
        "the lab's time as the token (review 59)": (
            lease_claim(EXPIRED, token=":now"),
            "tokens claimed: w1 0, w2 none; the receiver applied 1 write(s) and refused 0; the "
            "document ends under token 0: each claim takes the next token, one more than the task "
            "row's, which starts at 32: the tokens claimed must be 33",
        ),
        "UPDATE, then a SELECT for the token (issue 28, item 4)": (
            claim(
                f"{CLAIM_BY_UPDATE}return db.execute("
                "\"SELECT fence FROM task WHERE id='job-17'\").fetchone()[0]"
            ),
            "before your statement 2, past its 200 ms lease; w2 came at 200 ms, when now = "
            "lease_until: tokens claimed: w1 34, w2 34",
        ),
        "UPDATE, then the token read back by the owner's name": (
            claim(
                CLAIM_BY_UPDATE + 'return db.execute("SELECT fence FROM task WHERE owner=?", '
                "(me,)).fetchone()[0]"
            ),
            "tokens claimed: w1 34, w2 34",
        ),
        "the claim, then its lease in a second UPDATE": (
            claim(
                "row = db.execute(\"UPDATE task SET state='claimed', owner=?, fence=fence+1 "
                "WHERE id='job-17' AND (state='open' OR (state='claimed' AND lease_until <= ?)) "
                'RETURNING fence", (me, now)).fetchone()\nif row is None:\n    return None\n'
                "db.execute(\"UPDATE task SET lease_until=? WHERE id='job-17'\", "
                "(now + lease_ms,))\nreturn row[0]"
            ),
            "w2 came past w1's lease and could not claim the task",
        ),
    },
    "lesson6.fenced_receiver": {
        "the write every time, a print beside it": (
            receiver(
                f'print("writing", fence)\ndb.execute("{WRITE}", (body, writer, fence))\n'
                "return True"
            ),
            "the document ends under token 33: lost update",
        ),
        "the check in its own statement, then the write": (
            receiver(
                "highest = db.execute(\"SELECT fence FROM document WHERE id='report-17'\")"
                ".fetchone()[0]\nif fence < highest:\n    return False\n"
                f'db.execute("{WRITE}", (body, writer, fence))\nreturn True'
            ),
            "before your statement 2, past its lease; w2 wrote under 34 meanwhile",
        ),
        "the comparison turned round": (
            receiver(
                f'return db.execute("{WRITE} AND fence >= ?", (body, writer, fence, fence))'
                ".rowcount == 1"
            ),
            "applied 0 write(s)",
        ),
        "refuses every write": (
            receiver("return False"),
            "your receiver refused a write under token 34 although the highest token it had "
            "accepted was 0",
        ),
        "the token checked but never kept": (
            receiver(
                'return db.execute("UPDATE document SET body=?, writer=? WHERE '
                "id='report-17' AND fence <= ?\", (body, writer, fence)).rowcount == 1"
            ),
            "the document ends under token 0: lost update",
        ),
        "the writer's name instead of its token": (
            receiver(
                f'return db.execute("{WRITE} AND (writer IS NULL OR writer = ?)", '
                "(body, writer, fence, writer)).rowcount == 1"
            ),
            "the document ends under token 33: lost update",
        ),
        "an equal token refused (issue 28, item 5)": (
            receiver(
                f'return db.execute("{WRITE} AND fence < ?", (body, writer, fence, fence))'
                ".rowcount == 1"
            ),
            "your receiver refused a write under token 33 although the highest token it had "
            "accepted was 33",
        ),
        "an equal token refused, checked in one BEGIN IMMEDIATE": (
            receiver(
                'db.execute("BEGIN IMMEDIATE")\n'
                "highest = db.execute(\"SELECT fence FROM document WHERE id='report-17'\")"
                ".fetchone()[0]\nif fence > highest:\n"
                f'    db.execute("{WRITE}", (body, writer, fence))\n'
                'db.execute("COMMIT")\nreturn fence > highest'
            ),
            "refuse only a lower token (an equal one is the same holder's next write)",
        ),
        "the connection's total_changes as the answer (review 59)": (
            receiver(f"{FENCED_WRITE}\nreturn db.total_changes > 0"),
            "w1 frozen 300 ms between its report and its correction, past its lease; w2 wrote "
            "twice under 34 meanwhile: tokens claimed: w1 33, w2 34; the receiver applied 3 "
            "write(s) and refused 1; the document ends under token 34: your receiver returned "
            "True for w1's write under token 33, but that write never reached the document",
        ),
        "True, whatever it wrote (issue 28, item 5)": (
            receiver(f"{FENCED_WRITE}\nreturn True"),
            "your receiver returned True for w1's write under token 33, but that write never "
            "reached the document: return False when you refused",
        ),
        # once judged correct: w1's write landed, w2 wrote over it before its second statement,
        # and the lab read the document only once the receiver had returned
        "the fenced write, True only if the document still holds its token": (
            receiver(
                f'{FENCED_WRITE}\nreturn db.execute("SELECT fence FROM document WHERE'
                " id='report-17'\").fetchone()[0] == fence"
            ),
            "w1 frozen 300 ms before your statement 2, past its lease; w2 wrote under 34"
            " meanwhile: tokens claimed: w1 33, w2 34; the receiver applied 2 write(s) and refused"
            " 0; the document ends under token 34: your receiver returned False for w1's write"
            " under token 33, but that write reached the document",
        ),
        "the cursor returned": (
            receiver(f"return {FENCED_WRITE}"),
            "for w1's write under token 33, but that write never reached the document",
        ),
        "nothing returned": (
            receiver(FENCED_WRITE),
            "your receiver returned None for w2's write under token 34, but that write reached "
            "the document: return True when you wrote",
        ),
    },
    "lesson5.idempotent_consumer": {
        "the effect every time, a print beside it": (
            consumer(f'print("applied", message_id)\n{EFFECT}'),
            "delivered it again, and then msg-",
        ),
        "never applies": (consumer("pass"), "consumer.db holds 0 effect rows for msg-"),
        # once judged correct: the check counted each message's effect rows, not what they held
        "the inbox, and the subscriber's name applied for the payload": (
            applied_with("subscriber"),
            "consumer.db's effect row for msg-",
        ),
        "the inbox, and a payload of its own": (
            applied_with('"mug"'),
            "holds the payload 'mug', not the message's '{\"order_key\": \"order-17\"",
        ),
        "only while nothing took effect yet": (
            consumer(f'if not db.execute("SELECT 1 FROM effects").fetchone():\n    {EFFECT}'),
            "two different messages",
        ),
        "an inbox keyed on the subscriber alone": (
            consumer(
                'new = db.execute("INSERT OR IGNORE INTO inbox(subscriber, message_id) '
                "VALUES(?, ?)\", (subscriber, 'any')).rowcount\n"
                f"if new:\n    {EFFECT}"
            ),
            "two different messages",
        ),
        "the inbox noted, the effect applied anyway": (
            consumer(f"{INBOX}\n{EFFECT}"),
            "consumer.db holds 2 effect rows for msg-",
        ),
        "the inbox committed, then the effect (issue 28, item 2)": (
            consumer(CONSUMER_INBOX_FIRST),
            "the consumer was killed right after commit 1 (consumer.db) of its delivery of msg-",
        ),
        "the inbox committed first only once it holds another message (the second delivery)": (
            consumer(
                'earlier = db.execute("SELECT count(*) FROM inbox").fetchone()[0]\n'
                f"{INBOX}\n"
                'if earlier:\n    db.execute("COMMIT")\n    db.execute("BEGIN IMMEDIATE")\n'
                f"if new:\n    {EFFECT}"
            ),
            "(consumer.db then held 1 effect rows and 2 inbox rows)",
        ),
        "the inbox committed with db.commit(), then the effect": (
            consumer(CONSUMER_INBOX_FIRST.replace('db.execute("COMMIT")', "db.commit()")),
            "(consumer.db then held 0 effect rows and 1 inbox rows)",
        ),
        "the effect committed, then the inbox": (
            consumer(
                'if db.execute("SELECT 1 FROM inbox WHERE subscriber=? AND message_id=?", '
                "(subscriber, message_id)).fetchone():\n    return\n"
                f'{EFFECT}\ndb.execute("COMMIT")\ndb.execute("BEGIN IMMEDIATE")\n'
                'db.execute("INSERT INTO inbox(subscriber, message_id) VALUES(?, ?)", '
                "(subscriber, message_id))"
            ),
            "consumer.db holds 2 effect rows for msg-",
        ),
        "an inbox keyed by the payload (issue 28, item 3)": (
            consumer(
                INBOX.replace(
                    "(subscriber, message_id)).rowcount", "(subscriber, payload)).rowcount"
                )
                + f"\nif new:\n    {EFFECT}"
            ),
            "another message with the same payload",
        ),
        "the effect looked up by its payload": (
            consumer(
                'if not db.execute("SELECT 1 FROM effects WHERE payload=?", (payload,))'
                f".fetchone():\n    {EFFECT}"
            ),
            "another message with the same payload (3 deliveries in all); consumer.db holds 0",
        ),
        "committed by itself at the end (issue 28, item 8)": (
            consumer(f"{INBOX}\nif new:\n    {EFFECT}\ndb.commit()"),
            "the lab runs your consumer inside the delivery's transaction and commits it once "
            "your function returns: do not commit or roll back inside it",
        ),
        "a with db: block of its own": (
            consumer(f"with db:\n    {INBOX}\n    if new:\n        {EFFECT}"),
            "do not commit or roll back inside it",
        ),
        # what it has seen kept beside consumer.db, out of the delivery's transaction: killed
        # between that write and the lab's COMMIT, the message is seen and never applied
        "the ids kept in a JSON file beside consumer.db": (
            consumer(SEEN_IN_JSON.format(folder=RUN_FOLDER)),
            "killed right after write 1 (processed.json) of its delivery of msg-",
        ),
        "the ids kept in a JSON file written aside, then renamed over it": (
            consumer(
                SEEN_IN_JSON.format(folder=RUN_FOLDER).replace(
                    'with open(path, "w") as f:\n    json.dump(done, f)',
                    'with open(path + ".new", "w") as f:\n    json.dump(done, f)\n'
                    'os.replace(path + ".new", path)',
                )
            ),
            "killed right after write 3 (processed.json) of its delivery of msg-",
        ),
        # an empty marker, no byte written: killed between it and the lab's COMMIT, the
        # redelivery finds it and skips the effect
        "an empty marker file per message, made before the effect": (
            consumer(
                f"import os\nmarker = os.path.join({RUN_FOLDER}, 'seen-' + message_id)\n"
                f"if os.path.exists(marker):\n    return\nopen(marker, 'w').close()\n{EFFECT}"
            ),
            "killed right after write 1 (seen-msg-",
        ),
        "a folder per message, made before the effect": (
            consumer(
                f"import os\nmarker = os.path.join({RUN_FOLDER}, 'seen-' + message_id)\n"
                f"if os.path.isdir(marker):\n    return\nos.mkdir(marker)\n{EFFECT}"
            ),
            "consumer.db holds 0 effect rows for msg-",
        ),
        "the ids kept in a SQLite file of its own, INSERT OR IGNORE": (
            consumer(
                f"import os, sqlite3\nfolder = {RUN_FOLDER}\n"
                'seen = sqlite3.connect(os.path.join(folder, "seen.db"), isolation_level=None)\n'
                'seen.execute("CREATE TABLE IF NOT EXISTS seen(message_id TEXT PRIMARY KEY)")\n'
                'new = seen.execute("INSERT OR IGNORE INTO seen VALUES(?)", (message_id,))'
                f".rowcount\nif new:\n    {EFFECT}"
            ),
            "killed right after commit 2 (seen.db) of its delivery of msg-",
        ),
        "the ids kept in a JSON file outside the run folder, in the runs' own": (
            consumer(SEEN_IN_JSON.format(folder=f"os.path.dirname({RUN_FOLDER})")),
            "your consumer wrote outside its run folder (",
        ),
    },
    "lesson8.charge_once": {
        "a new uuid4 key per attempt": (plan("transient", "uuid4"), "charged 2 times"),
        "a key from node_attempt": (plan("transient", "attempt"), "order-1:1, order-1:2"),
        "node_attempt alone as the key": (plan("transient", "attempt_only"), "another order's"),
        "retrying on every exception": (plan("every", "order"), "declined card of order-1 was"),
        "LangGraph's default retry_on": (plan("default", "order"), "reading the reply timed out"),
        "no retry at all": (plan("none", "order"), "the shop thinks the payment failed"),
        "not a policy": (plan("always", "order"), "choose one of: none, default, every"),
        "a typo in the policy": (
            plan("transeint", "order"),
            "'transeint' is not a policy; choose one of: none, default, every, transient",
        ),
    },
    "lesson8.drain_safe": {
        "no handler: SIGTERM ends it": (
            serve('return graph.invoke(inputs, config, durability="sync")'),
            "SIGTERM ended the worker at once, inside b",
        ),
        "sys.exit on SIGTERM": (
            serve(
                "import signal, sys\nsignal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))\n"
                "return graph.invoke(inputs, config)"
            ),
            "b ran twice",
        ),
        "SIGTERM ignored": (
            serve(
                "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "return graph.invoke(inputs, config)"
            ),
            "was SIGKILLed",
        ),
        "a drain asked of a control the run never got": (
            serve(f"{DRAIN_ON_SIGTERM}\nreturn graph.invoke(inputs, config)"),
            "grace period (0.8 s) was over",
        ),
        "GraphDrained left to escape": (
            serve(f"{DRAIN_ON_SIGTERM}\nreturn graph.invoke(inputs, config, control=control)"),
            "GraphDrained escaped serve",
        ),
        "drained, then lingering past the grace": (
            drained("", after="import time\n    time.sleep(1)\n    return None"),
            "your serve still ran when the grace period (0.8 s) was over",
        ),
        "os._exit on SIGTERM": (
            serve(
                "import os, signal\nsignal.signal(signal.SIGTERM, lambda s, f: os._exit(0))\n"
                "return graph.invoke(inputs, config)"
            ),
            "exited before b's result was saved",
        ),
        "drained, then every exception hidden (issue 28, item 6)": (
            serve(
                f"{DRAIN_ON_SIGTERM}\ntry:\n"
                "    return graph.invoke(inputs, config, control=control)\n"
                "except Exception:\n    return None"
            ),
            "node a failed by itself (NodeFailed) before any stop was asked, and your serve "
            "ended without an error (it returned, or called sys.exit(0)): the worker exited 0",
        ),
        "GraphDrained caught, a bare except beside it": (
            drained("except:\n    pass"),
            "the worker exited 0, so its orchestrator takes a failed run",
        ),
        "GraphDrained caught, any other error printed": (
            drained("except Exception as error:\n    print('the run failed:', error)"),
            "node a failed by itself (NodeFailed)",
        ),
        "drained, and a network error taken for passing": (
            drained("except (ConnectionError, TimeoutError):\n    return None"),
            "node a failed by itself (NodeFailed)",
        ),
        "drained, and an OSError hidden beside it": (
            serve(
                f"from langgraph.errors import GraphDrained\n{DRAIN_ON_SIGTERM}\ntry:\n"
                "    return graph.invoke(inputs, config, control=control)\n"
                "except (GraphDrained, OSError):\n    return None"
            ),
            "node a failed by itself (NodeFailed)",
        ),
        **{
            f"drained, and the {family} family hidden beside it": (
                drained(f"except {family}:\n    return None"),
                "node a failed by itself (NodeFailed)",
            )
            for family in ("ValueError", "LookupError", "TypeError", "ArithmeticError")
        },
        "every error turned into a clean exit": (
            drained("except BaseException:\n    import os\n    os._exit(0)"),
            "Catch GraphDrained alone, and let every other error out",
        ),
    },
}

RIGHT: dict[str, dict[str, object]] = {
    "lesson7.predict_crash": {
        "in other words": {
            "Before Commit": "Lost.",
            "commit in flight": "lost",
            "commit-flushed": "Kept",
            "after_commit": ["kept"],
        },
        "shouted, as the tables print them": {
            "before_commit": "LOST",
            "commit_in_flight": "LOST",
            "commit_flushed": "KEPT",
            "after_commit": "KEPT",
        },
        "with an ending, in another order": {
            "after_commit": "kept!",
            "commit_flushed": " kept ",
            "before_commit": "Lost!",
            "commit_in_flight": ("lost",),
        },
    },
    "lesson7.one_transaction": {
        "claim the row first: UPDATE ... WHERE done=0 RETURNING": pg_step(
            'with db.transaction():\n    if not db.execute("UPDATE progress SET done=1 WHERE '
            f'id=1 AND done=0 RETURNING id"):\n        return\n    {PG_RECEIPT}'
        ),
        "SERIALIZABLE, retried on a serialization failure": pg_step(
            "for attempt in range(3):\n    try:\n        with db.transaction():\n"
            '            db.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")\n'
            f"            if {PG_DONE.format('')}:\n                return\n"
            f"            {PG_RECEIPT}\n            {PG_MARK}\n        return\n"
            "    except Exception as error:\n"
            '        if "could not serialize" not in str(error):\n            raise'
        ),
        # the deadlock verdict's advice: the rolled-back one runs again and finds done=1
        "FOR SHARE, retried on a deadlock": pg_step(
            "import psycopg\nfor attempt in range(3):\n    try:\n        with db.transaction():\n"
            f"            if {PG_DONE.format(' FOR SHARE')}:\n                return\n"
            f"            {PG_RECEIPT}\n            {PG_MARK}\n        return\n"
            "    except psycopg.errors.DeadlockDetected:\n        pass"
        ),
        "FOR NO KEY UPDATE, done read by a helper inside": pg_step(
            "def done():\n"
            '    return db.execute("SELECT done FROM progress WHERE id=1 FOR NO KEY UPDATE")'
            "[0][0] == 1\n"
            f"with db.transaction():\n    if done():\n        return\n    {PG_RECEIPT}\n"
            f"    {PG_MARK}"
        ),
    },
    "lesson9.green_matrix": {
        # the lab flushed sys.stdout before each fork: AttributeError, and a KeyError of its own
        "print silenced with sys.stdout = None": step(SILENCED + GREEN_BODY, "report_step"),
        "KEY through a variable": green_keyed("KEY"),
        "a uuid5 of the job": green_keyed(
            "str(__import__('uuid').uuid5(__import__('uuid').NAMESPACE_URL, 'job-17/save-report'))"
        ),
        "a key from the job's name": green_keyed("'job-17:save-report:v1'"),
        "a sha256 of the payload": green_keyed(
            "'job-17:' + __import__('hashlib').sha256(PAYLOAD.encode()).hexdigest()"
        ),
        "a crc32 of KEY": green_keyed("f\"job-17:{__import__('zlib').crc32(KEY.encode())}\""),
        "KEY and a fixed report month": green_keyed("f'{KEY}:2026-11'"),
        "an audit row under its key, in a SQLite file in a folder of the run folder": audited(
            " PRIMARY KEY", "INSERT OR IGNORE"
        ),
        "both stores in one with, control first: effect.db commits first": step(
            "with control, effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
            "    control.mark_done()",
            "report_step",
        ),
        # once refused: the file, closed by Python as it was dropped, had no crash point
        "the report written to a file never closed, whole each time": step(
            "open('report-17.txt', 'w').write(PAYLOAD)\n"
            "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
            "with control:\n    control.mark_done()",
            "report_step",
        ),
        # once refused as a duplicate: a crash before the rename left the temporary behind
        "the report saved through a NamedTemporaryFile, renamed into place": step(
            "import json, os, tempfile\n"
            "with tempfile.NamedTemporaryFile('w', dir='.', delete=False) as f:\n"
            "    json.dump({'report': 17}, f)\nos.replace(f.name, 'report.json')\n"
            "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
            "with control:\n    control.mark_done()",
            "report_step",
        ),
        # once refused as unwatched; its commits are crash points in effect.db-wal, and the
        # receiver's key makes the step idempotent in WAL mode as in rollback mode
        "the effect file in WAL mode": step(
            'effect.db.execute("PRAGMA journal_mode=WAL")\nwith effect:\n'
            "    effect.add_receipt_once(KEY, PAYLOAD)\nwith control:\n    control.mark_done()",
            "report_step",
        ),
    },
    "lesson1.find_the_window": {
        "a bare word": "checkpoint",
        "a list, capitalised": ["Checkpoint"],
        "the placeholder left beside it": {"???", "checkpoint"},
        "a frozenset, with a full stop": frozenset({"checkpoint."}),
    },
    "lesson2.predict_five_cases": {
        "as the tables print them": five(
            "DUPLICATE", "LOST", "CONSISTENT", "Consistent", "consistent "
        ),
        "as one writes them, keys too": {
            "Effect_First / Effect": "duplicated",
            "checkpoint_first/Checkpoint": "Lost.",
            "atomic/in transaction": ["consistent"],
            "ATOMIC/committed": "consistent",
            " idempotent/effect": "Consistent!",
        },
    },
    "lesson2.safe_step": {
        "print silenced with sys.stdout = None": step(SILENCED + GREEN_BODY),
        "without with blocks": step("effect.add_receipt_once(KEY, PAYLOAD)\ncontrol.mark_done()"),
        "INSERT OR IGNORE in SQL": step(
            'effect.db.execute("INSERT OR IGNORE INTO receipts(op_key, payload) VALUES(?, ?)",'
            " (KEY, PAYLOAD))\nwith control:\n    control.mark_done()"
        ),
        "its own stable key": step(
            "with effect:\n    effect.add_receipt_once('report-17', PAYLOAD)\n"
            "with control:\n    control.mark_done()"
        ),
        "one receipt, checked by the receiver, then done in SQL": step(
            "with effect:\n    effect.add_receipt_once(KEY, PAYLOAD)\n"
            'control.db.execute("UPDATE progress SET done=1 WHERE id=1")'
        ),
        "both writes in one transaction, the effect file attached": step(
            "control.db.execute(\"ATTACH 'effect.db' AS e\")\nwith control:\n"
            '    control.db.execute("INSERT INTO e.receipts(op_key, payload) VALUES(?, ?)", '
            "(KEY, PAYLOAD))\n    control.mark_done()"
        ),
        "with a print, a pause and a helper of its own": step(
            "import time\ndef save():\n    print('saving', KEY)\n    time.sleep(0.05)\n"
            "    effect.add_receipt_once(KEY, PAYLOAD)\nsave()\ncontrol.mark_done()"
        ),
        "one transaction over both files, on a connection of its own": step(
            'import sqlite3\ndb = sqlite3.connect("control.db")\n'
            "db.execute(\"ATTACH 'effect.db' AS e\")\nwith db:\n"
            '    db.execute("INSERT INTO e.receipts(op_key, payload) VALUES(?, ?)", '
            "(KEY, PAYLOAD))\n"
            '    db.execute("UPDATE progress SET done=1 WHERE id=1")'
        ),
        "its own connections, the receiver's key first": step(
            OWN_CONNECTION_INSERT.replace("INSERT", "INSERT OR IGNORE") + OWN_CONNECTION_DONE
        ),
        "both files in WAL mode, the receiver's key first": step(
            'effect.db.execute("PRAGMA journal_mode=WAL")\n'
            'control.db.execute("PRAGMA journal_mode=WAL")\n'
            "effect.add_receipt_once(KEY, PAYLOAD)\ncontrol.mark_done()"
        ),
        "a log of its own beside the files": step(
            'with open("step.log", "a") as log:\n    log.write(f"sending {KEY}\\n")\n'
            "effect.add_receipt_once(KEY, PAYLOAD)\ncontrol.mark_done()"
        ),
    },
    "lesson2.bug_hunt": {
        "the key as a literal": step(
            BUG_HUNT_KEYED.format('"job-17:save-report:v1"'), "buggy_step"
        ),
        "a uuid5 of the job": step(
            BUG_HUNT_KEYED.format(
                "str(__import__('uuid').uuid5(__import__('uuid').NAMESPACE_URL, "
                "'job-17/save-report'))"
            ),
            "buggy_step",
        ),
        "a key made from KEY": step(BUG_HUNT_KEYED.format('KEY + ":retry-safe"'), "buggy_step"),
        "a date of its own, through SQLite": step(
            BUG_HUNT_KEYED.format(
                "'job-17:' + " + sqlite_says("SELECT date('2024-01-01', '+1 day')")
            ),
            "buggy_step",
        ),
        # made once, kept beside control.db and effect.db before the first attempt's receipt:
        # every retry reads it back
        "a uuid4 made once, kept beside the files for the retries": step(
            KEY_KEPT_IN.format(where='"key.txt"'), "buggy_step"
        ),
        # a temporary file of a new name in every run: the same write, whatever its name
        "a uuid4 made once, written aside and renamed into place": step(
            KEY_KEPT_IN.format(where='"key.txt"').replace(
                '    with open(path, "w") as kept:\n        kept.write(key)\n',
                "    import tempfile\n"
                '    with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as kept:\n'
                "        kept.write(key)\n    os.replace(kept.name, path)\n",
            ),
            "buggy_step",
        ),
    },
    "lesson3.operation_key": {
        "a sha256 of the operation id": key(
            "import hashlib\nreturn hashlib.sha256(state['operation_id'].encode()).hexdigest()"
        ),
        "a uuid5": key(
            "import uuid\nreturn str(uuid.uuid5(uuid.NAMESPACE_URL, state['operation_id']))"
        ),
        "tenant and operation": key("return f\"team-A:{state['operation_id']}\""),
        "cached per process": (
            "def operation_key(state, _keys={}):\n"
            '    return _keys.setdefault(state["operation_id"], "op:" + state["operation_id"])\n'
        ),
        "with a print and a pause": key(
            "import time\nprint(state)\ntime.sleep(0.05)\nreturn state['operation_id']"
        ),
        "the host and SQLite's time printed, not in the key": key(
            f"import socket\nprint(socket.gethostname(), {sqlite_says('SELECT CURRENT_TIMESTAMP')})"
            "\nreturn state['operation_id']"
        ),
    },
    "lesson3.predict_kills": {
        "as text": {"before_create": "2", "after_create": " 3", "paused": 2.0},
        "with units, keys as one writes them": {
            "Before Create": "2.0",
            "after-create": "3 tickets",
            "PAUSED": [2],
        },
    },
    "lesson2.shortest_ttl": {
        "with its unit": "31 h",
        "as a float": 31.0,
        "the unit in full": "31 hours.",
        "the unit in Chinese": "31 小时",
    },
    "lesson2.tool_checklist": {
        "booleans, capitals, keys as one writes them": {
            "Effect_First / Idempotent": False,
            "effect_first/key": "None",
            "effect-first/on retry": "Duplicated.",
            "idempotent/idempotent": True,
            "idempotent/key": " job-17:save-report:v1 ",
            "idempotent/on_retry": "Original",
            "queue_pop/idempotent": "NO",
            "queue_pop/key": "no key",
            "queue_pop/on_retry": "Next job.",
        },
        "no key written as Python's None": {
            **CHECKLIST,
            "effect_first/key": None,
            "queue_pop/key": None,
        },
    },
    "lesson3.release_gate": {
        "each condition in turn": gate(
            f"if {CRASH} != 1:\n    return False\nif {REJECTION} != 0:\n    return False\n"
            f'return {CHANGED} == "refused"'
        ),
        "a table of expectations": gate(
            'want = {"tickets_after_crash": 1, "tickets_after_rejection": 0, '
            '"changed_title": "refused"}\nreturn all(trial(k) == v for k, v in want.items())'
        ),
    },
    "lesson4.choose_durability": {"shouted, with spaces": " SYNC "},
    "lesson4.predict_sync_trial": {
        "as text, with units": {"Checkpoints": "4", "ledger lines": "9 lines"},
    },
    "lesson5.predict_tickets": {
        "as one writes them": {
            "New Key": "2 tickets",
            "same-key": "1",
            "reconcile": 1.0,
            "GIVE_UP": [1],
        },
        "as text": tickets_after("2", "1", " 1", "1.0"),
        "in another order, with units": {
            "give_up": "1 ticket",
            "reconcile": "1 ticket",
            "same_key": 1,
            "new_key": 2.0,
        },
    },
    "lesson5.recover_unknown": {
        "retry under the same key": recovery(
            'return service.create(intent["op_key"], intent["title"])'
        ),
        "look up, or create, in one line": recovery(
            'return service.lookup(intent["op_key"]) or '
            'service.create(intent["op_key"], intent["title"])'
        ),
        "another name, helpers inside": (
            "def settle(intent, service):\n"
            "    key = intent['op_key']\n"
            "    def known():\n"
            "        return service.lookup(key)\n"
            "    return known() if known() is not None else service.create(key, intent['title'])\n"
        ),
    },
    "lesson6.claim_statement": {
        "read, decide and write in one BEGIN IMMEDIATE": claim(
            'db.execute("BEGIN IMMEDIATE")\n'
            'state, fence, until = db.execute("SELECT state, fence, lease_until FROM task '
            "WHERE id='job-17'\").fetchone()\n"
            'if state == "done" or (state == "claimed" and now < until):\n'
            '    db.execute("COMMIT")\n    return None\n'
            "db.execute(\"UPDATE task SET state='claimed', owner=?, fence=?, lease_until=? "
            "WHERE id='job-17'\", (me, fence + 1, now + lease_ms))\n"
            'db.execute("COMMIT")\nreturn fence + 1'
        ),
        "the one statement, named parameters": lease_claim(EXPIRED),
        "the token read first, then a compare-and-set": claim(
            'fence, state, until = db.execute("SELECT fence, state, lease_until FROM task '
            "WHERE id='job-17'\").fetchone()\n"
            'if state == "done" or (state == "claimed" and now < until):\n    return None\n'
            "won = db.execute(\"UPDATE task SET state='claimed', owner=?, fence=?, "
            "lease_until=? WHERE id='job-17' AND fence=?\", "
            "(me, fence + 1, now + lease_ms, fence)).rowcount\n"
            "return fence + 1 if won else None"
        ),
    },
    "lesson6.fenced_receiver": {
        "check and write in one BEGIN IMMEDIATE": receiver(
            'db.execute("BEGIN IMMEDIATE")\n'
            "highest = db.execute(\"SELECT fence FROM document WHERE id='report-17'\")"
            ".fetchone()[0]\nif fence >= highest:\n"
            f'    db.execute("{WRITE}", (body, writer, fence))\n'
            'db.execute("COMMIT")\nreturn fence >= highest'
        ),
        "a note first, then the fenced write": receiver(
            'print("token", fence)\n'
            f'return db.execute("{WRITE} AND fence <= ?", (body, writer, fence, fence))'
            ".rowcount == 1"
        ),
        # once refused: w2 wrote over w1's write before changes() was asked, and the lab took
        # the document's last body for the only write that landed
        "the fenced write, then SQLite's changes()": receiver(
            f'{FENCED_WRITE}\nreturn db.execute("SELECT changes()").fetchone()[0] == 1'
        ),
        "total_changes() before and after the fenced write": receiver(
            'before = db.execute("SELECT total_changes()").fetchone()[0]\n'
            f'{FENCED_WRITE}\nreturn db.execute("SELECT total_changes()").fetchone()[0] > before'
        ),
        "the rowcount itself, 1 or 0": receiver(
            f'return db.execute("{WRITE} AND ? >= fence", (body, writer, fence, fence)).rowcount'
        ),
    },
    "lesson5.idempotent_consumer": {
        "look for the message's effect first": consumer(
            'if not db.execute("SELECT 1 FROM effects WHERE message_id=?", (message_id,))'
            f".fetchone():\n    {EFFECT}"
        ),
        "the inbox, written as the solution is, and a print": consumer(
            f"{INBOX}\nprint('new' if new else 'seen', message_id)\nif new:\n    {EFFECT}"
        ),
        "the inbox looked up, then written, in the one transaction": consumer(
            'if db.execute("SELECT 1 FROM inbox WHERE subscriber=? AND message_id=?", '
            "(subscriber, message_id)).fetchone():\n    return\n"
            'db.execute("INSERT INTO inbox(subscriber, message_id) VALUES(?, ?)", '
            f"(subscriber, message_id))\n{EFFECT}"
        ),
        "the inbox, and a log of each delivery beside consumer.db": consumer(
            f'{INBOX}\nwith open("consumer.log", "a") as log:\n'
            "    log.write(f\"{message_id} {'new' if new else 'seen'}\\n\")\n"
            f"if new:\n    {EFFECT}"
        ),
        "the payload applied as JSON with its keys sorted": consumer(
            f"import json\n{INBOX}\nif new:\n    "
            + EFFECT.replace(
                "(message_id, payload))",
                "(message_id, json.dumps(json.loads(payload), sort_keys=True)))",
            )
        ),
        "inside a savepoint of its own": consumer(
            f'db.execute("SAVEPOINT delivery")\n{INBOX}\nif new:\n    {EFFECT}\n'
            'db.execute("RELEASE delivery")'
        ),
    },
    "lesson8.charge_once": {
        "shouted, with spaces": plan(" Transient ", "ORDER."),
        "capitalised": plan("Transient", "Order"),
        "the parts' names capitalised too": {"Policy": "Transient", "Key": "Order"},
        "with a full stop and an exclamation": plan("transient.", "order!"),
    },
    "lesson8.drain_safe": {
        "GraphDrained caught, the state returned": serve(
            f"from langgraph.errors import GraphDrained\n{DRAIN_ON_SIGTERM}\ntry:\n"
            "    return graph.invoke(inputs, config, control=control)\n"
            "except GraphDrained:\n    return graph.get_state(config).values"
        ),
        "every step saved (sync), drained on SIGTERM": serve(
            f"from langgraph.errors import GraphDrained\n{DRAIN_ON_SIGTERM}\ntry:\n"
            '    return graph.invoke(inputs, config, control=control, durability="sync")\n'
            "except GraphDrained:\n    pass"
        ),
        "True after a drain (issue 28, item 7)": drained("", "return True"),
        "'drained' after a drain (issue 28, item 7)": drained("", 'return "drained"'),
        "any other error logged and raised again": drained(
            "except Exception as error:\n    print('the run failed:', error)\n    raise"
        ),
    },
}

# Answers whose code cannot do its job as written: judged "error", with a fragment of the
# message (their line, or what to mend), never "correct" nor a wrong outcome.
ERRORS: dict[str, dict[str, tuple[object, str]]] = {
    "lesson7.one_transaction": {
        "a typo in a name": (
            pg_step(f"with db.transaction():\n    {PG_RECEIPT.replace('KEY,', 'KYE,')}"),
            "NameError: name 'KYE' is not defined, at line 3",
        ),
        "a column that is not there": (
            pg_step('with db.transaction():\n    db.execute("UPDATE progress SET dnoe=1")'),
            'column "dnoe" of relation "progress" does not exist',
        ),
        "COMMIT written as SQL": (
            pg_step(f'{PG_RECEIPT}\ndb.execute("COMMIT")'),
            "write transactions as `with db.transaction():`, not as SQL",
        ),
    },
    "lesson9.green_matrix": {
        "a typo in a name": (green_keyed("KYE"), "NameError: name 'KYE' is not defined, at line 2"),
        # a reader's trace.jsonl beside the lab's: once a traceback of the lab's (KeyError)
        "a log of what it sent, named as the lab's trace": (
            step(logged_to("trace.jsonl", GREEN_BODY), "report_step"),
            LABS_NAME,
        ),
        # the lab's trace removed: once green, with "0 crash points"
        "a clean-up that removes every .jsonl file of its folder": (
            step(CLEAN_UP + GREEN_BODY, "report_step"),
            LABS_NAME,
        ),
        "a log of what it sent, named as the recording's output": (
            step(logged_to("record.stdout", GREEN_BODY), "report_step"),
            LABS_NAME,
        ),
    },
    "lesson3.release_gate": {
        "a scenario that does not exist": (
            gate('return trial("tickets") == 1'),
            "no scenario 'tickets'; the scenarios: tickets_after_crash",
        ),
        "a count where True or False goes": (
            gate(f"return {CRASH}"),
            "your gate must return True or False",
        ),
        "a typo in a name": (gate("return tral('changed_title') == 'refused'"), "NameError"),
    },
    "lesson2.safe_step": {
        "an error raised after stderr was captured": (  # once "no error message": the lab's
            step("import io, sys\nsys.stderr = io.StringIO()\nraise RuntimeError('mail down')"),
            "RuntimeError: mail down, at line 4",
        ),
        "a clean-up that removes every .jsonl file of its folder": (  # once a StopIteration
            step(CLEAN_UP + GREEN_BODY),
            LABS_NAME,
        ),
        "a log of what it sent, named as the lab's trace": (
            step(logged_to("trace.jsonl", GREEN_BODY)),
            LABS_NAME,
        ),
        "a helper from another cell": (
            step(
                "with effect:\n    effect.add_receipt_once(make_key(), PAYLOAD)\n"
                "control.mark_done()"
            ),
            "only the function's own source runs",
        ),
        "a constant from another cell": (
            step("effect.add_receipt_once(MY_KEY, PAYLOAD)\ncontrol.mark_done()"),
            "put its imports, helpers and constants inside it",
        ),
        "sys.exit in the middle": (
            step(
                "import sys\neffect.add_receipt_once(KEY, PAYLOAD)\nsys.exit(0)\n"
                "control.mark_done()"
            ),
            "raised SystemExit: 0, at line 4: sys.exit(0)",
        ),
    },
    "lesson3.operation_key": {
        "sys.exit": (key("import sys\nsys.exit()"), "raised SystemExit, at line 3: sys.exit()"),
        "os._exit": (key("import os\nos._exit(0)"), "at line 3: os._exit(0)"),
    },
    "lesson6.claim_statement": {
        "a helper from another cell": (
            claim("return claim_open_task(db, me)"),
            "only the function's own source runs",
        ),
        "a typo in a method's name": (
            lease_claim(EXPIRED).replace("db.execute(", "db.exeute("),
            "AttributeError: 'sqlite3.Connection' object has no attribute 'exeute'",
        ),
    },
    "lesson6.fenced_receiver": {
        "a column that is not there": (
            receiver(
                "return db.execute(\"UPDATE document SET body=? WHERE id='report-17' AND "
                'token <= ?", (body, fence)).rowcount == 1'
            ),
            "no such column: token",
        ),
        "a typo in a name": (
            receiver(
                f'return db.execute("{WRITE} AND fence <= ?", (body, writer, fnece, fence))'
                ".rowcount == 1"
            ),
            "NameError: name 'fnece' is not defined",
        ),
    },
    "lesson5.recover_unknown": {
        "a typo in a method's name": (
            recovery('return service.lookp(intent["op_key"])'),
            "AttributeError",
        ),
    },
    "lesson5.idempotent_consumer": {
        "a log of what it applied, named as the lab's trace": (
            consumer(logged_to("trace.jsonl", f"{INBOX}\nif new:\n    {EFFECT}")),
            LABS_NAME,
        ),
        "a typo in the name": (
            consumer(f"{INBOX}\nif nwe:\n    {EFFECT}"),
            "NameError: name 'nwe' is not defined, at line 3",
        ),
        "an inbox without OR IGNORE: a redelivery raises": (
            consumer(
                'db.execute("INSERT INTO inbox(subscriber, message_id) VALUES(?, ?)",'
                f" (subscriber, message_id))\n{EFFECT}"
            ),
            "IntegrityError",
        ),
    },
    "lesson8.drain_safe": {
        "a typo in GraphDrained": (
            drained("").replace("except GraphDrained:", "except GraphDrianed:"),
            "NameError: name 'GraphDrianed' is not defined",
        ),
        "RunControl from another cell": (
            serve(
                "import signal\ncontrol = RunControl()\n"
                "signal.signal(signal.SIGTERM, lambda s, f: control.request_drain())\n"
                "return graph.invoke(inputs, config, control=control)"
            ),
            "NameError",
        ),
    },
}
