"""The workshop: checked exercises, one module per lesson, as Kaggle's learntools lays them out.

    from labkit.workshop import lesson2
    lesson2.safe_step.check(my_step)   # .hint(), .solution()

`checks` is how every check behaves (verdicts, hints, solutions, predictions in natural
forms); `lesson1` ... `lesson4` hold each lesson's exercises and their judges, which run the
reader's answer through real crashes; `key_probe` runs a reader's key function in a worker,
once as it is and once restarted (a new parent process, another hash seed, its clocks in another
year, month, day, hour and minute, on another host).
"""
