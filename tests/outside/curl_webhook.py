"""A node that tells the shop's order service about a refund by running curl, as the ops
team's shell scripts do: the POST leaves from another program, through no socket of this
process. The service's address and token come in `config["configurable"]`. The other graphs
start the same curl the other ways Python has (a command line through the shell, `os.system`,
`os.posix_spawnp`, `os.spawnvp`, asyncio), and `retried` only when it finds its own receipt
from a run before: the run without a crash never starts it, a recovery after the receipt does.
"""

import asyncio
import os
import shlex
import subprocess
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph


class State(TypedDict):
    order: str


def curl(state: State, config: RunnableConfig) -> list[str]:
    hook, refund = config["configurable"], f"refund={state['order']}"
    token = f"X-Token: {hook['token']}"
    return ["curl", "--silent", "--fail", "-X", "POST", "-H", token, "-d", refund, hook["url"]]


def notify(state: State, config: RunnableConfig) -> dict:
    subprocess.run(curl(state, config), check=True)
    return {}


def notify_by_shell(state: State, config: RunnableConfig) -> dict:
    subprocess.run(shlex.join(curl(state, config)), shell=True, check=True)
    return {}


def notify_by_system(state: State, config: RunnableConfig) -> dict:
    assert os.system(shlex.join(curl(state, config))) == 0
    return {}


def notify_by_spawn(state: State, config: RunnableConfig) -> dict:
    pid = os.posix_spawnp("curl", curl(state, config), os.environ)
    assert os.waitpid(pid, 0)[1] == 0
    return {}


def notify_by_spawnvp(state: State, config: RunnableConfig) -> dict:
    assert os.spawnvp(os.P_WAIT, "curl", curl(state, config)) == 0
    return {}


async def notify_by_asyncio(state: State, config: RunnableConfig) -> dict:
    process = await asyncio.create_subprocess_exec(*curl(state, config))
    assert await process.wait() == 0
    return {}


def refund_once(state: State, config: RunnableConfig) -> dict:
    if os.path.exists("receipts.txt"):  # a retry: the service should know
        subprocess.run(curl(state, config), check=True)
    with open("receipts.txt", "a") as receipts:
        receipts.write(f"refunded {state['order']}\n")
    return {}


def one_node(node: object) -> StateGraph:
    return StateGraph(State).add_node("notify", node).add_edge(START, "notify")


graph = one_node(notify)
by_shell = one_node(notify_by_shell)
by_system = one_node(notify_by_system)
by_spawn = one_node(notify_by_spawn)
by_spawnvp = one_node(notify_by_spawnvp)
by_asyncio = one_node(notify_by_asyncio)
retried = one_node(refund_once)
INPUT = {"order": "o-10"}
