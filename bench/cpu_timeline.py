"""Where the machine's cores go while a customer's 100,000-row fast job runs on the default stack.

    python -m bench.cpu_timeline [RUNS]

Each run is `outside-bulk`'s job (bench/outside.py): a fresh stack in `make run`'s shape, the bench's
list uploaded and polled every 0.1 s until seen completed, against the bench's loopback DNS server
at 2 ms (warmed). Meanwhile a thread reads every 10 ms the CPU the web process, the qcluster's
processes and the DNS server have used (`/proc/<pid>/stat`) and how busy the machine's cores were
(`/proc/stat`). The job's time is split as `outside` splits it: upload (the POST), waiting (its
response → the first chunk claimed), running (→ completed) and seen (→ the poll that saw it).

Prints one JSON line: each run's phases, each with its wall seconds, the cores busy on average
(the whole machine's, anything else running included) and each process's CPU seconds; then each
figure's median, min and max over the runs. The kernel counts CPU in ticks of 10 ms, so a phase
shorter than a few ticks is only roughly split.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.data import generate
from bench.dnsd import start_dns
from bench.outside import MAKE_RUN, _phases, _start, _upload_and_poll
from bench.procs import Processes, command_line, cpu_seconds, group_members
from bench.stack import Stack

SAMPLE_SECONDS = 0.01
PHASES = ("upload", "waiting", "running", "seen")
_TICK = os.sysconf("SC_CLK_TCK")

# A sample: (monotonic seconds, {process: CPU seconds so far}, the core seconds the machine was busy so far).
Sample = tuple[float, dict[str, float], float]


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 3
    data = generate(100_000)
    measured = []
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 2.0, warm=data)
        for _ in range(runs):
            with Stack("sqlite", dns.address, extra_env=MAKE_RUN) as stack:
                account = stack.create_account("timeline@bench.example", credits=len(data.rows) + 1000)
                _start(stack)
                assert stack.web is not None
                groups = _groups(group_members(stack.web.pid), dns.process.pid)
                samples: list[Sample] = []
                stop = threading.Event()
                sampler = threading.Thread(target=_sample, args=(groups, samples, stop))
                sampler.start()
                time.sleep(0.2)  # the idle stack's own samples first
                started = time.monotonic()
                try:
                    seen = _upload_and_poll(stack, account, data.csv_bytes(), "fast")
                finally:
                    stop.set()
                    sampler.join()
                split = _phases(stack, seen)
            assert seen.job["status"] == "completed", seen.job
            measured.append({"seconds": round(seen.seconds, 3), **_split(samples, started, seen.seconds, split)})
    print(json.dumps({"load": os.getloadavg(), "runs": measured, "summary": _summary(measured)}))


def _groups(members: list[int], dns_pid: int) -> dict[str, list[int]]:
    """The stack's processes by what they are (`make run`'s shell left out: it only waits)."""
    groups: dict[str, list[int]] = {"dns": [dns_pid], "qcluster": [], "web": []}
    for pid in members:
        line = " ".join(command_line(pid))
        if "qcluster" in line:
            groups["qcluster"].append(pid)
        elif "runserver" in line:
            groups["web"].append(pid)  # the autoreloader's parent and the serving child alike
    return groups


def _sample(groups: dict[str, list[int]], samples: list[Sample], stop: threading.Event) -> None:
    while True:
        samples.append((time.monotonic(), {name: cpu_seconds(pids) for name, pids in groups.items()}, _busy()))
        if stop.wait(SAMPLE_SECONDS):
            return


def _busy() -> float:
    """The core seconds the machine has been busy so far (anything but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / _TICK


def _split(samples: list[Sample], started: float, seconds: float, split: dict[str, float]) -> dict[str, Any]:
    """Each phase's wall seconds, cores busy and processes' CPU, from the samples at its ends; then the
    whole job's CPU, and the least time it could take were that CPU spread over every core with none
    ever idle (`floor_s`; `floor_without_dns_s` leaves out the DNS server, elsewhere in production)."""
    completed = started + seconds - split["seen_s"]  # the job's own timestamps, on this clock
    claimed = completed - split["running_s"]
    uploaded = min(started + split["upload_s"], claimed)  # a worker may claim before the response is read
    ends = (started, uploaded, claimed, completed, started + seconds)
    spans = {"job": (started, ends[-1]), **{name: span for name, *span in zip(PHASES, ends, ends[1:], strict=False)}}
    measured: dict[str, Any] = {}
    for name, (begin, finish) in spans.items():
        first, last = _at(samples, begin), _at(samples, finish)
        wall = finish - begin
        measured[name] = {
            "wall_s": round(wall, 3),
            "cores_busy": round((last[2] - first[2]) / wall, 2) if wall > 0 else 0.0,
            **{f"{process}_cpu_s": round(last[1][process] - first[1][process], 3) for process in sorted(first[1])},
        }
    job = measured.pop("job")
    cores = os.cpu_count() or 1
    used = sum(job[f"{process}_cpu_s"] for process in ("dns", "qcluster", "web"))
    measured["floor_s"] = round(used / cores, 3)
    measured["floor_without_dns_s"] = round((used - job["dns_cpu_s"]) / cores, 3)
    return {"job": job, **measured}


def _at(samples: list[Sample], when: float) -> Sample:
    """The sample nearest `when` (10 ms apart)."""
    return min(samples, key=lambda sample: abs(sample[0] - when))


def _summary(measured: list[dict[str, Any]]) -> dict[str, Any]:
    def spread(values: list[float]) -> dict[str, float]:
        return {"median": round(statistics.median(values), 3), "min": min(values), "max": max(values)}

    summary: dict[str, Any] = {
        key: spread([run[key] for run in measured]) for key in ("seconds", "floor_s", "floor_without_dns_s")
    }
    for phase in ("job", *PHASES):
        summary[phase] = {key: spread([run[phase][key] for run in measured]) for key in measured[0][phase]}
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
