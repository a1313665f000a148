"""A scripted OpenAI-compatible server on 127.0.0.1 for tests and benchmarks (no network, no model).

Endpoints: ``POST /v1/chat/completions``, ``POST /predict`` (the ``http`` system), ``GET /v1/models``,
``GET /stats``, ``POST /reset``. Two ways to run it:

* in-process, in a background thread: ``with running_server(Script()) as srv: srv.base_url, srv.stats``
* as a subprocess (its CPU does not compete with the client's event loop; it can be killed):
  ``python -m clineval.testing.openai_server --script s.json --port 0`` prints ``PORT <n>`` then serves;
  ``clineval.testing.process.running_server_process(Script())`` does that for you.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

from clineval.core.specs import canonical_json
from clineval.testing.script import Reply, Script, ScriptState

HOST = "127.0.0.1"


def _last_user_text(messages: Any) -> str:
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def _words(messages: Any) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages if isinstance(m, dict))


class ScriptedServer:
    """The aiohttp application; ``state`` holds counters readable from any thread."""

    def __init__(self, script: Script) -> None:
        self.state = ScriptState(script)
        self._ids = itertools.count(1)
        self.app = web.Application()
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self.app.router.add_post("/predict", self._predict)
        self.app.router.add_get("/v1/models", self._models)
        self.app.router.add_get("/stats", self._stats)
        self.app.router.add_post("/reset", self._reset)

    @property
    def script(self) -> Script:
        return self.state.script

    async def _body(self, request: web.Request) -> dict[str, Any] | None:
        try:
            body = await request.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def _authorized(self, request: web.Request) -> web.Response | None:
        key = self.script.require_api_key
        given = request.headers.get("Authorization", "")
        if key is None or given == f"Bearer {key}":
            return None
        self.state.record_unauthorized()  # echoes the key like real servers do, to test redaction
        error = {"message": f"Incorrect API key provided: {given.removeprefix('Bearer ')}", "type": "auth"}
        return web.json_response({"error": error}, status=401)

    def _record(self, request: web.Request, prompt: str, body: dict[str, Any]) -> Reply:
        return self.state.record(request.path, prompt, body, auth_header="Authorization" in request.headers)

    async def _reply(self, reply: Reply) -> web.Response | None:
        """Wait the scripted latency; return the scripted non-answer response, if any."""
        await asyncio.sleep(reply.delay if reply.delay is not None else self.script.latency_s)
        headers = None
        if reply.retry_after is not None:  # delta-seconds (integers as "2", not "2.0") or an HTTP-date string
            after = reply.retry_after
            headers = {"Retry-After": f"{after:g}" if isinstance(after, float) else str(after)}
        if reply.body is not None:
            return web.Response(text=reply.body, status=reply.status, headers=headers)
        if reply.json_body is not None:
            return web.json_response(reply.json_body, status=reply.status, headers=headers)
        if reply.status != 200:
            error = {"message": f"scripted HTTP {reply.status}", "type": "scripted"}
            return web.json_response({"error": error}, status=reply.status, headers=headers)
        return None

    async def _admit(self, request: web.Request) -> dict[str, Any] | web.Response:
        """The JSON body of a request to answer, or the 400 / 401 response refusing it."""
        body = await self._body(request)
        if body is None:
            return web.json_response({"error": {"message": "request body is not a JSON object"}}, status=400)
        denied = self._authorized(request)
        return body if denied is None else denied

    async def _chat(self, request: web.Request) -> web.Response:
        body = await self._admit(request)
        if isinstance(body, web.Response):
            return body
        messages = body.get("messages", [])
        prompt = _last_user_text(messages)
        reply = self._record(request, prompt, body)
        if self.script.reject_unknown_model and body.get("model") != self.script.model:
            error = {"message": f"The model `{body.get('model')}` does not exist.", "type": "NotFoundError"}
            return web.json_response({"error": error}, status=404)
        scripted = await self._reply(reply)
        if scripted is not None:
            return scripted
        content = reply.content if reply.content is not None else self.script.answer_for(prompt)
        prompt_tokens, completion_tokens = _words(messages), len(content.split())
        return web.json_response(
            {
                "id": f"chatcmpl-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.script.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def _predict(self, request: web.Request) -> web.Response:
        body = await self._admit(request)
        if isinstance(body, web.Response):
            return body
        prompt = canonical_json(body.get("input", {}))
        reply = self._record(request, prompt, body)
        scripted = await self._reply(reply)
        if scripted is not None:
            return scripted
        content = reply.content if reply.content is not None else self.script.answer_for(prompt)
        return web.json_response({"id": body.get("id"), "output": content})

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.script.model, "object": "model"}]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.state.snapshot())

    async def _reset(self, request: web.Request) -> web.Response:
        self.state.reset()
        return web.json_response({"ok": True})

    async def serve(self, sock: socket.socket) -> web.AppRunner:
        return await serve_app(self.app, sock)


def bind_loopback(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(1024)
    return sock


class ServerHandle:
    """What a test sees of a running in-process server."""

    def __init__(self, server: ScriptedServer, port: int) -> None:
        self.server = server
        self.port = port
        self.url = f"http://{HOST}:{port}"
        self.base_url = f"{self.url}/v1"

    @property
    def stats(self) -> dict[str, Any]:
        return self.server.state.snapshot()

    def reset(self) -> None:
        self.server.state.reset()


async def serve_app(app: web.Application, sock: socket.socket) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    await web.SockSite(runner, sock, backlog=1024).start()
    return runner


@contextmanager
def serving_in_thread(app: web.Application, name: str) -> Iterator[int]:
    """Serve an aiohttp app on 127.0.0.1 from a background thread with its own loop; yields the port."""
    sock = bind_loopback()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            runner = loop.run_until_complete(serve_app(app, sock))
        except BaseException as exc:
            failure.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        # Handlers still sleeping on a scripted delay: cancel them so the loop closes cleanly.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    started.wait(10)
    if failure:
        raise RuntimeError(f"test server failed to start: {failure[0]}")
    try:
        yield sock.getsockname()[1]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@contextmanager
def running_server(script: Script | None = None) -> Iterator[ServerHandle]:
    """Serve ``script`` from a background thread with its own event loop until the block exits."""
    server = ScriptedServer(script or Script())
    with serving_in_thread(server.app, "clineval-openai-server") as port:
        yield ServerHandle(server, port)


async def serve_until_signal(app: web.Application, port: int) -> None:
    """Serve on 127.0.0.1:``port`` (0 = free), print ``PORT <n>``, stop cleanly on SIGTERM / SIGINT."""
    sock = bind_loopback(port)
    runner = await serve_app(app, sock)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible test server (127.0.0.1).")
    parser.add_argument("--script", type=Path, help="Script JSON file (default: answer 'A' after 50 ms)")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (printed as 'PORT <n>')")
    parser.add_argument("--latency", type=float, help="override the script's latency_s")
    args = parser.parse_args(argv)
    script = Script.load(args.script) if args.script else Script()
    if args.latency is not None:
        script = script.model_copy(update={"latency_s": args.latency})
    asyncio.run(serve_until_signal(ScriptedServer(script).app, args.port))


if __name__ == "__main__":
    main()
