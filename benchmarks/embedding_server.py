"""Embedding on a GPU server: the OpenAI-compatible client's throughput, batching, retries and
back-pressure, against a simulated server or a real one.

For a library too big to embed on the CPU (docs/performance.md, "A library of ten million chunks"),
ingest points `embedder = "openai:<model>"` at an embedding server (text-embeddings-inference,
vLLM). This measures the client side of that path: real paragraphs sent through
`OpenAIEmbedder` at each `--concurrency`, with the requests, 413 splits, 429 answers and retries
it made on the wire.

With no `--url`, the server is simulated here, behaving as text-embeddings-inference does: one model
worker takes the waiting requests together, up to `--server-batch` texts, and spends
`--step-ms` plus `--text-ms` per text on each pass (a sleep: the GPU's time, not this CPU's); more
than `--client-batch` texts in one request is refused with 413, and more than `--queue` waiting
requests with 429. Those timings are parameters, not a GPU measured: the rows measure what the
client does with such a server. A last row answers at once (no model time) and is the client's own
ceiling on these cores: how fast it can send texts and parse vectors.

    .venv/bin/python benchmarks/embedding_server.py --library ../shared/data/library/covidqa_articles.jsonl
    .venv/bin/python benchmarks/embedding_server.py --library … --url http://gpu-host:8080/v1 --model BAAI/bge-small-en-v1.5
    .venv/bin/python benchmarks/embedding_server.py --serve --port 8181   # for build_speed.py
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from embedding_speed import paragraphs

from evidenceqa.bench import machine
from evidenceqa.embeddings import OpenAIEmbedder
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

DIM = 384  # all-MiniLM-L6-v2's, so responses are the size the default model's would be
TEN_MILLION = 10_000_000


@dataclass
class Waiting:
    texts: int
    done: threading.Event = field(default_factory=threading.Event)


class SimulatedServer:
    """A text-embeddings-inference-like server on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self, step_ms: float, text_ms: float, server_batch: int, client_batch: int, queue: int, port: int = 0
    ) -> None:
        self.step = step_ms / 1000
        self.per_text = text_ms / 1000
        self.server_batch = server_batch
        self.client_batch = client_batch
        self.queue = queue
        self.waiting: list[Waiting] = []
        self.arrived = threading.Condition()
        # One vector's JSON, reused for every text: the server's own CPU cost stays negligible.
        self.vector = json.dumps([round(0.05 * (i % 7) - 0.1, 4) for i in range(DIM)])
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.stopped = False

    def serve(self) -> None:
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        threading.Thread(target=self._model, daemon=True).start()

    def close(self) -> None:
        with self.arrived:
            self.stopped = True
            self.arrived.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def admit(self, texts: int) -> Waiting | None:
        """Queues a request, or None when the queue is full (429)."""
        with self.arrived:
            if len(self.waiting) >= self.queue:
                return None
            request = Waiting(texts)
            self.waiting.append(request)
            self.arrived.notify_all()
            return request

    def _model(self) -> None:
        """Takes waiting requests together, up to server_batch texts, one pass at a time."""
        while True:
            with self.arrived:
                while not self.waiting and not self.stopped:
                    self.arrived.wait()
                if self.stopped:
                    return
                taken, texts = [], 0
                while self.waiting and (not taken or texts + self.waiting[0].texts <= self.server_batch):
                    request = self.waiting.pop(0)
                    taken.append(request)
                    texts += request.texts
            if self.step or self.per_text:
                time.sleep(self.step + self.per_text * texts)
            for request in taken:
                request.done.set()


def _handler(server: SimulatedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            count = len(body["input"])
            if count > server.client_batch:
                message = f"batch size {count} > maximum allowed batch size {server.client_batch}"
                return self._send(413, json.dumps({"error": {"message": message}}))
            request = server.admit(count)
            if request is None:
                return self._send(429, json.dumps({"error": {"message": "Model is overloaded"}}))
            request.done.wait()
            data = ",".join(
                f'{{"object":"embedding","index":{i},"embedding":{server.vector}}}' for i in range(count)
            )
            self._send(200, f'{{"object":"list","model":"{body["model"]}","data":[{data}],"usage":{{}}}}')

        def _send(self, status: int, text: str) -> None:
            raw = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def _serve(settings: tuple[float, float, int, int, int], urls: Connection) -> None:
    server = SimulatedServer(*settings)
    server.serve()
    urls.send(server.url)
    urls.recv()  # until the benchmark is done with it
    server.close()


@contextmanager
def simulated(args: argparse.Namespace, instant: bool = False) -> Iterator[str]:
    """The simulated server in a process of its own, so the client's figures are the client's alone."""
    step, per_text = (0.0, 0.0) if instant else (args.step_ms, args.text_ms)
    ours, theirs = multiprocessing.Pipe()
    settings = (step, per_text, args.server_batch, args.client_batch, args.queue)
    process = multiprocessing.Process(target=_serve, args=(settings, theirs), daemon=True)
    process.start()
    try:
        yield ours.recv()
    finally:
        ours.send("done")
        process.join(10)


def run(url: str, model: str, texts: list[str], batch: int, concurrency: int) -> list[str]:
    embedder = OpenAIEmbedder(model, url, None, dim=DIM, batch_size=batch, concurrency=concurrency)
    embedder.embed(texts[:batch])  # warm-up: connections, and any 413 that settles the batch size
    embedder.stats = type(embedder.stats)()
    start = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - start)
    s = embedder.stats
    return [str(concurrency), str(embedder.batch_size), f"{rate:,.0f}", f"{s.requests:,}",
            str(s.overloaded), str(s.retries), str(s.peak_in_flight)]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", type=Path)
    parser.add_argument("--count", type=int, default=500, help="distinct paragraphs (repeated to --texts)")
    parser.add_argument("--texts", type=int, default=8192, help="texts embedded per row")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--url", help="a real OpenAI-compatible server instead of the simulated one")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--step-ms", type=float, default=5.0)
    parser.add_argument("--text-ms", type=float, default=0.25)
    parser.add_argument("--server-batch", type=int, default=256)
    parser.add_argument("--client-batch", type=int, default=32)
    parser.add_argument("--queue", type=int, default=8)
    parser.add_argument("--ingest", type=Path, nargs="+", metavar="FILE",
                        help="then build a library of these files through the simulated server (build_speed.py)")  # fmt: skip
    parser.add_argument("--port", type=int, default=0, help="with --serve (default: any free port)")
    parser.add_argument("--serve", action="store_true", help="only run the simulated server, until stopped")
    args = parser.parse_args()
    if args.serve:
        server = SimulatedServer(
            args.step_ms, args.text_ms, args.server_batch, args.client_batch, args.queue, args.port
        )
        server.serve()
        print(server.url, flush=True)  # for embedding_api_base, e.g. to run build_speed.py against it
        threading.Event().wait()
    if args.library is None:
        parser.error("--library is needed to measure")
    found = paragraphs(args.library, args.count)
    texts = [found[i % len(found)] for i in range(args.texts)]
    batch = load_settings().embed_batch_size or OpenAIEmbedder.BATCH_SIZE
    rows = []
    for concurrency in args.concurrency:
        if args.url:
            rows.append(["server", *run(args.url, args.model, texts, batch, concurrency)])
            continue
        with simulated(args) as url:
            rows.append(["simulated", *run(url, args.model, texts, batch, concurrency)])
    if not args.url:
        with simulated(args, instant=True) as url:
            rows.append(["answers at once", *run(url, args.model, texts, batch, max(args.concurrency))])
    headers = ["Server", "Concurrency", "Batch", "Texts/s", "Requests", "429s", "Retries", "Peak in flight"]
    print(markdown.table(headers, rows, [False, *[True] * 7]), end="")
    words = sum(len(t.split()) for t in texts) / len(texts)
    rates = [float(row[3].replace(",", "")) for row in rows]
    server = (args.url and "the server at --url") or (
        f"simulated server: {args.step_ms:g} ms a pass + {args.text_ms:g} ms a text, up to "
        f"{args.server_batch} texts a pass, {args.client_batch} texts a request, {args.queue} requests waiting"
    )
    ceiling = "" if args.url else f", and {hours(rates[-1])} h at the client's ceiling"
    print(f"\n{len(texts):,} texts of {words:.0f} words on average, batches of {batch} (embed_batch_size) "
          f"cut to the server's limit after its first 413 · {server} · {TEN_MILLION:,} chunks embed in "
          f"{hours(max(rates[: len(args.concurrency)]))} h at the best rate{ceiling} · "
          f"client on {machine.current().tag()}\n")  # fmt: skip
    if args.ingest:
        with simulated(args) as url:
            print(ingest(url, args.model, args.ingest), end="")


def hours(texts_per_s: float) -> str:
    return f"{TEN_MILLION / texts_per_s / 3600:.1f}"


def ingest(url: str, model: str, files: list[Path]) -> str:
    """build_speed.py's table for a cold build whose embeddings come from the server at `url`, and
    its rates carried linearly to ten million chunks."""
    env = os.environ | {"EVIDENCEQA_EMBEDDER": f"openai:{model}", "EVIDENCEQA_EMBEDDING_API_BASE": url}
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "build.json"
        command = [sys.executable, str(Path(__file__).with_name("build_speed.py")), "--home",
                   str(Path(folder) / "home"), "--record", str(record), *map(str, files)]  # fmt: skip
        table = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
        built = json.loads(record.read_text(encoding="utf-8"))
    scale = TEN_MILLION / built["chunks"]
    seconds = built["seconds"]
    # Only the phases that grow with the chunks; loading the embedder happens once.
    grows = [name for name in seconds if name.startswith(("ingest", "index"))]
    phases = ", ".join(f"{name.split(' (')[0]} {seconds[name] * scale / 3600:.1f} h" for name in grows)
    disk = sum(built["disk_mb"].values()) * scale / 1024
    return (f"{table.rstrip()}\n\nCarried linearly to {TEN_MILLION:,} chunks: {phases}; "
            f"{disk:,.0f} GB on disk.\n\n")  # fmt: skip


if __name__ == "__main__":
    main()
