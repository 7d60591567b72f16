"""Server time on every answer: a `Server-Timing` header, read by the bench and browser tools.

`app` is the time from the request reaching the page to its answer's headers (every view builds
its whole body before that); `cpu` is the CPU time of the thread that ran the view, which a busy
machine does not inflate as it does wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from starlette.responses import Response
from starlette.types import Scope

HEADER = b"server-timing"


class ServerTiming:
    """ASGI middleware: adds `Server-Timing: app;dur=MS` to every HTTP answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()

        async def timed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                spent = (time.perf_counter() - began) * 1000
                message["headers"] = joined([*message.get("headers", []), (HEADER, metric("app", spent))])
            await send(message)

        await self.app(scope, receive, timed)


def joined(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers with every `Server-Timing` value in one header (a client may keep only one)."""
    values = [value for key, value in headers if key.lower() == HEADER]
    return [*((key, value) for key, value in headers if key.lower() != HEADER), (HEADER, b", ".join(values))]


def metric(name: str, ms: float) -> bytes:
    return f"{name};dur={ms:.1f}".encode()


def with_cpu(run: Callable[[], Response]) -> Response:
    """The response of `run`, with the CPU time its thread spent as `Server-Timing: cpu;dur=MS`."""
    began = time.thread_time()
    response = run()
    response.headers.append("server-timing", metric("cpu", (time.thread_time() - began) * 1000).decode())
    return response


def durations(header_values: list[str]) -> dict[str, float]:
    """Metric name -> milliseconds from the values of the `Server-Timing` headers of one answer."""
    out: dict[str, float] = {}
    for value in header_values:
        for item in value.split(","):
            name, _, params = item.strip().partition(";")
            for param in params.split(";"):
                key, _, number = param.strip().partition("=")
                if key == "dur" and name:
                    try:
                        out[name] = float(number)
                    except ValueError:
                        continue
    return out
