sync_trial = {
    "checkpoints": 4,  # the input, then after __start__, a and b
    "ledger_lines": 9,  # 8 for a clean run, plus c's second start
}

lesson4.predict_sync_trial.check(sync_trial)
