#!/usr/bin/env python3
"""The LangGraph peer of `cargo xtask bench`: the same trajectory as the runner's benchmark.

A fake chat model asks for N calls of a trivial tool (`add(a: i, b: 1)`), one per turn, then answers with text; the
graph runs every call. Only `graph.invoke()` is timed: building the graph and opening the
checkpointer are not.

Two graphs: `prebuilt` (`langgraph.prebuilt.create_react_agent`) and `handgraph` (a
`StateGraph(MessagesState)` with a `ToolNode` and `tools_condition`, written out). Three
checkpointers: `none`, `memory` (`InMemorySaver`) and `sqlite` (`SqliteSaver` on a file).

Output, read by `tests/bench/peer.rs`: a header line starting with `python `, a column line, then
one line per graph, checkpointer and N:

    handgraph sqlite   200     0.669     299.0         599.5  (0.669, 0.700, 0.650)

that is the median seconds, iterations/s and supersteps/s (a superstep is one node run, 2N+1
per trajectory), then every run's seconds.

Usage: python langgraph_peer.py [N ...]    (default 200 1000; REPEATS=3 by default)
Packages: tests/bench/langgraph-requirements.txt (installed by `cargo xtask bench`).
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Callable, Iterator

warnings.filterwarnings("ignore")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition  # noqa: E402

try:
    from langgraph.checkpoint.sqlite import SqliteSaver
except ImportError:  # the sqlite checkpointer is a package of its own
    SqliteSaver = None


@tool
def add(a: int, b: int) -> int:
    """Return a + b."""
    return a + b


class ScriptedModel(GenericFakeChatModel):
    """The library's fake model, answering from an iterator, that also takes tools."""

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002 - the script already knows its calls
        return self


def final_answer(n: int) -> str:
    return f"made {n} calls"


def scripted_model(n: int) -> ScriptedModel:
    def turns() -> Iterator[AIMessage]:
        for i in range(n):
            call = {"name": "add", "args": {"a": i, "b": 1}, "id": f"t{i}", "type": "tool_call"}
            yield AIMessage(content="", tool_calls=[call])
        yield AIMessage(content=final_answer(n))

    return ScriptedModel(messages=turns())


def prebuilt(n: int, saver):
    return create_react_agent(scripted_model(n), [add], checkpointer=saver)


def handgraph(n: int, saver):
    model = scripted_model(n).bind_tools([add])

    def think(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", think)
    graph.add_node("tools", ToolNode([add]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=saver)


GRAPHS: list[tuple[str, Callable]] = [("prebuilt", prebuilt), ("handgraph", handgraph)]


@contextmanager
def checkpointer(kind: str, folder: str):
    if kind == "none":
        yield None
    elif kind == "memory":
        yield InMemorySaver()
    elif kind == "sqlite":
        path = os.path.join(folder, f"checkpoints-{time.time_ns()}.sqlite")
        connection = sqlite3.connect(path, check_same_thread=False)
        try:
            saver = SqliteSaver(connection)
            saver.setup()
            yield saver
        finally:
            connection.close()
    else:
        raise ValueError(f"unknown checkpointer {kind}")


def timed_run(build: Callable, n: int, kind: str, folder: str) -> float:
    with checkpointer(kind, folder) as saver:
        graph = build(n, saver)
        config = {"recursion_limit": 2 * n + 10, "configurable": {"thread_id": "peer"}}
        started = time.perf_counter()
        result = graph.invoke({"messages": [HumanMessage("start")]}, config)
        elapsed = time.perf_counter() - started
    messages = result["messages"]
    # The question, a call and its result per iteration, the answer.
    if len(messages) != 2 * n + 2 or messages[-1].content != final_answer(n):
        raise SystemExit(f"the trajectory went wrong: {len(messages)} messages, last {messages[-1]!r}")
    return elapsed


def package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "n/a"


def main(argv: list[str]) -> None:
    ns = [int(arg) for arg in argv] or [200, 1000]
    repeats = int(os.environ.get("REPEATS", "3"))
    kinds = ["none", "memory"] + (["sqlite"] if SqliteSaver is not None else [])
    print(
        f"python {sys.version.split()[0]}  langgraph {package('langgraph')}  "
        f"langchain-core {package('langchain-core')}  "
        f"checkpoint-sqlite {package('langgraph-checkpoint-sqlite')}  repeats={repeats}"
    )
    print(f"{'variant':10} {'ckpt':7} {'N':>5} {'median_s':>9} {'iter/s':>9} {'supersteps/s':>13}  (all runs s)")
    with tempfile.TemporaryDirectory() as folder:
        for name, build in GRAPHS:
            for kind in kinds:
                for n in ns:
                    runs = [timed_run(build, n, kind, folder) for _ in range(repeats)]
                    median = statistics.median(runs)
                    each = ", ".join(f"{run:.3f}" for run in runs)
                    print(
                        f"{name:10} {kind:7} {n:>5} {median:>9.3f} {n / median:>9.1f} "
                        f"{(2 * n + 1) / median:>13.1f}  ({each})",
                        flush=True,
                    )


if __name__ == "__main__":
    main(sys.argv[1:])
