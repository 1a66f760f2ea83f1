def serve(graph, inputs, config):
    # Runs in the worker. An orchestrator sends SIGTERM, waits a grace period, then SIGKILL.
    import signal

    from langgraph.errors import GraphDrained
    from langgraph.runtime import RunControl

    control = RunControl()  # SIGTERM asks the run to stop at the next step boundary, saved
    signal.signal(signal.SIGTERM, lambda signum, frame: control.request_drain("SIGTERM"))
    try:
        return graph.invoke(inputs, config, control=control)
    except GraphDrained:  # saved, to be resumed elsewhere: not a failure
        return None


lesson8.drain_safe.check(serve)
