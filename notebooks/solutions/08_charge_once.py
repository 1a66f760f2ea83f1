# Retry what says nothing about the charge (a reset, a timeout), not a declined card; the key
# is the order's own id: the same on every attempt, so the service returns the first charge.
charge_plan = {"policy": "transient", "key": "order"}

lesson8.charge_once.check(charge_plan)
