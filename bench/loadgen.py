"""A load generator process: ``python -m bench.loadgen`` reads a JSON plan on stdin, prints results as JSON.

Plan: ``{"port", "threads", "start_at" (epoch seconds), "requests": [[path, api_key, body], ...]}``,
and optionally ``"seconds"``: then the threads go on for that long, round the list again if need be.
Its threads take requests from the list in order, one new connection each (gunicorn's sync
workers close every connection), and record the client latency, the status and, where the
answer has one, the server's ``response_time_ms``.
"""

from __future__ import annotations

import http.client
import itertools
import json
import sys
import threading
import time
from typing import Any


def main() -> None:
    plan = json.load(sys.stdin)
    requests: list[list[str]] = plan["requests"]
    seconds = plan.get("seconds")
    position = itertools.cycle(range(len(requests))) if seconds else iter(range(len(requests)))
    stop_at = float("inf")
    lock = threading.Lock()
    latencies: list[float] = []
    server_ms: list[float] = []
    statuses: dict[str, int] = {}

    def worker() -> None:
        while True:
            with lock:
                index = next(position, None)
            if index is None or time.time() >= stop_at:
                return
            path, key, body = requests[index]
            started = time.perf_counter()
            status, payload = _post(plan["port"], path, key, body)
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                statuses[str(status)] = statuses.get(str(status), 0) + 1
                if status == 200 and b"response_time_ms" in payload:
                    server_ms.append(float(json.loads(payload)["response_time_ms"]))

    threads = [threading.Thread(target=worker) for _ in range(plan["threads"])]
    time.sleep(max(0.0, plan["start_at"] - time.time()))
    began = time.time()
    if seconds:
        stop_at = began + seconds
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result: dict[str, Any] = {
        "began": began,
        "ended": time.time(),
        "latencies_ms": latencies,
        "server_ms": server_ms,
        "statuses": statuses,
    }
    json.dump(result, sys.stdout)


def _post(port: int, path: str, key: str, body: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(
            "POST",
            path,
            body=body.encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        response = connection.getresponse()
        return response.status, response.read()
    except OSError:
        return 0, b""
    finally:
        connection.close()


if __name__ == "__main__":
    main()
