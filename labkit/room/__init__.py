"""The instructor's view of the room: a JupyterHub service (issue 30, part 4).

Participants' panels send their prediction before a crash and the outcome their run produced;
the instructor (the hub's admin) sees the room's distribution beside the real outcomes, live,
and pushes the crash point the room runs next. store.py holds the answers, app.py is the
service (the hub's OAuth on every request), page.py the instructor's page, client.py what a
participant's kernel uses (nothing at all outside the hub).
"""
