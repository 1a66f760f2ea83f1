def operation_key(state):
    # Fixed in the first input, per business request, before the first attempt; the same on
    # every run of the node. Not the thread_id, and not generated inside the node.
    return state["operation_id"]


lesson3.operation_key.check(operation_key)
