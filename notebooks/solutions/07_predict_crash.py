order_3_after_restart = {
    "before_commit": "lost",  # no COMMIT sent: the restarted server rolls it back
    "commit_in_flight": "lost",  # inside COMMIT, but no commit record in the WAL yet
    "commit_flushed": "kept",  # on disk: WAL replay commits it; the client saw an error
    "after_commit": "kept",  # answered, so durable: that is what COMMIT promises
}

lesson7.predict_crash.check(order_3_after_restart)
