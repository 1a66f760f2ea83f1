"""`python -m labkit.room`: the room's service, as the hub starts it (hub/services.py)."""

from labkit.room.app import main

main()
