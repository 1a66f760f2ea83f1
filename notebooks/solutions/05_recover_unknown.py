def recover(intent, service):
    # Look the operation up by its own key before anything else: timed out is not failed.
    found = service.lookup(intent["op_key"])
    if found is not None:
        return found
    # Not there (yet): create under the same key, so a late first call gets this ticket too.
    return service.create(intent["op_key"], intent["title"])


lesson5.recover_unknown.check(recover)
