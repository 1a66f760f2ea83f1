"""The workshop hub (issue 30): a real JupyterHub on one machine, a system user per participant.

    python3 tasks.py hub --participants 20   # as root: users workshop-1..20, then the hub

config.py turns Settings into JupyterHub's configuration, services.py names the hub-managed
services and their roles (the one place another service plugs in), participants.py makes and
removes the system users, proxy.py installs configurable-http-proxy from npm, passwords.py
makes the workshop's passwords, start.py starts and stops the hub, client.py and kernel.py are
a participant's side (log in by the REST API, start a server, run code in a kernel).
"""
