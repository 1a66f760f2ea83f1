predictions = {
    "effect_first/effect": "duplicate",  # the receipt is there, done=0: recovery saves it again
    "checkpoint_first/checkpoint": "lost",  # done=1, no receipt: recovery skips the step
    "atomic/in_transaction": "consistent",  # nothing committed: recovery does it once
    "atomic/committed": "consistent",  # both committed together: recovery skips
    "idempotent/effect": "consistent",  # recovery retries, the receiver returns receipt 1
}

lesson2.predict_five_cases.check(predictions)
