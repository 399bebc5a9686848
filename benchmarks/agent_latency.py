"""The latency an agent sees, beside the web app's: the same library behind `evidenceqa serve`, asked
through the JSON API (as the chat page asks), the MCP server (the official SDK's client over
streamable HTTP) and the OpenAI-compatible API (the official `openai` SDK), on loopback.

Each channel answers its own questions (the answer cache would otherwise serve the second channel
from the first one's answer) and searches the same ones; channels take turns question by question,
so each meets the machine in the same state. The first WARM_UP questions are not timed. Example:

    .venv/bin/python benchmarks/agent_latency.py --home .evidenceqa-bench \
        --questions ../shared/data/benchmarks/clinician-dev.jsonl --limit 20
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
from load import Server, Setup
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI
from search_latency import percentile, question_arguments, write_record

from evidenceqa.bench import machine
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.settings import load_settings
from evidenceqa.store import create_api_token, list_users, open_store
from evidenceqa.text import markdown

WARM_UP = 3
CHANNELS = ("web app JSON API", "MCP tool call", "OpenAI chat completion")


def api_token(server: Server) -> str:
    with open_store(load_settings(home=server.home, database_url=server.database_url)) as store:
        return create_api_token(store, list_users(store)[0], "benchmark")[1]


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def measure(url: str, token: str, questions: list[str]) -> dict[str, dict[str, list[float]]]:
    bearer = {"Authorization": f"Bearer {token}"}
    figures: dict[str, dict[str, list[float]]] = {
        "answer": {c: [] for c in CHANNELS},
        "search": {c: [] for c in CHANNELS},
    }
    async with (
        httpx.AsyncClient(base_url=url, headers=bearer, timeout=300) as web,
        httpx2.AsyncClient(headers=bearer, timeout=300) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as mcp,
    ):
        await mcp.initialize()
        openai = AsyncOpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0, timeout=300)

        def calls(question: str) -> dict[str, dict[str, Callable[[], Awaitable[Any]]]]:
            message = [{"role": "user", "content": question}]
            return {
                "answer": {
                    CHANNELS[0]: lambda: _checked(web.post("/api/ask", json={"question": question})),
                    CHANNELS[1]: lambda: _tool(mcp.call_tool("answer_question", {"question": question})),
                    CHANNELS[2]: lambda: openai.chat.completions.create(model="evidenceqa", messages=message),
                },
                "search": {
                    CHANNELS[0]: lambda: _checked(web.get("/api/search", params={"q": question})),
                    CHANNELS[1]: lambda: _tool(mcp.call_tool("search_evidence", {"question": question})),
                    CHANNELS[2]: lambda: openai.chat.completions.create(
                        model="evidenceqa-search", messages=message
                    ),
                },
            }

        for turn in range(len(questions) // len(CHANNELS)):
            for c, channel in enumerate(CHANNELS):
                question = questions[turn * len(CHANNELS) + c]
                for kind, by_channel in calls(question).items():
                    elapsed = await timed(by_channel[channel])
                    if turn >= WARM_UP:
                        figures[kind][channel].append(elapsed)
        await openai.close()
    return figures


async def _checked(request: Awaitable[httpx.Response]) -> None:
    (await request).raise_for_status()


async def _tool(call: Awaitable[Any]) -> None:
    result = await call
    if result.is_error:
        raise RuntimeError(result.content[0].text)


def main() -> None:
    parser = question_arguments(__doc__, limit=20)
    parser.add_argument("--record", type=Path, help="Also save the figures as JSON here.")
    args = parser.parse_args()
    wanted = (args.limit + WARM_UP) * len(CHANNELS)
    questions = list(dict.fromkeys(q.question for q in read_questions(args.questions, wanted * 2)))[:wanted]
    with Server(args.home, users=1, setup=Setup()) as server:
        figures = asyncio.run(measure(server.url, api_token(server), questions))
    rows, record = [], {}
    for kind, by_channel in figures.items():
        for channel, values in by_channel.items():
            p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
            rows.append([kind, channel, str(len(values)), f"{p50:.0f}", f"{p95:.0f}"])
            record[f"{kind}, {channel}"] = {"p50": p50, "p95": p95, "n": len(values)}
    print(
        markdown.table(
            ["Call", "Channel", "Questions", "p50 ms", "p95 ms"], rows, [False, False, True, True, True]
        ),
        end="",
    )
    print(f"\nextractive answers, answer cache cold for each question · one client at a time · loopback · "
          f"{machine.current().tag()}\n")  # fmt: skip
    write_record(args.record, record)


if __name__ == "__main__":
    main()
