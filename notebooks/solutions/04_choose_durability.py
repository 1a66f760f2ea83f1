# exit loses the run outright; async can lose the last checkpoints to the slow writes and then
# the run, or re-run more nodes; sync re-runs only the node that was killed.
choice = "sync"

lesson4.choose_durability.check(choice)
