"""Study 004, lesson 4 (notebooks/04_durability_under_sigkill): LangGraph's durability modes
`sync`, `async` and `exit` under a SIGKILL inside a node.

`experiment` (the reader's choice and what a trial found; runs in the kernel, never imports
LangGraph) → `trials` (runs inside the trial server) → `graphs` (the linear and parallel
graphs, in forked workers); `pitfalls` reproduces the study's five real errors;
`time_travel` replays and forks the linear graph from an earlier checkpoint;
`consequences` turns the lesson's kills and clean runs into a workload's day per mode.
"""
