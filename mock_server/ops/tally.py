"""The requests of this process, by operation and status, counted in plain Python on every request.

A request costs a dict look-up and two additions. Its count is the sum of its buckets'. The observer,
control/observe.py, adds them itself. A prometheus_client counter and histogram would take two locks,
about a tenth of a plain request's time. The figures are exposed at scrape time through a custom
collector, `RequestFigures`. prometheus_client documents that way for values kept outside its
instruments. `snapshot` copies them on the event loop, where they change.

Under `--workers N` every worker writes its tally, whole, to a file of its own, `requests-PID.json`.
The file sits in the directory that prometheus_client's multiprocess mode uses, beside its `.db`
files, which it alone reads. A worker writes it every `FLUSH_S` while the tally changes. A scrape
adds up the other workers' files and its own snapshot, in `other_workers`. A worker that was replaced
leaves its file, as its counters do, because a counter never goes down.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

MULTIPROCESS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"
DURATION_BOUNDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FIRST_BOUND = DURATION_BOUNDS[0]
BUCKET_LABELS = (*(str(bound) for bound in DURATION_BOUNDS), "+Inf")
FLUSH_S = 1.0  # A worker's requests are in its file, and in other workers' scrapes, at most this long after.
NO_ANSWER = "none"  # The status label of a request whose connection closed before any answer.
FILE_PREFIX, FILE_SUFFIX = "requests-", ".json"

Row = list[float]  # The sum of durations, then one count per bucket, not cumulative. The last is +Inf.
Rows = dict[tuple[str, str], Row]  # (operation, status label) -> row.
ByStatus = dict[int | None, Row]  # One operation's rows by status, where None means no answer.


def new_row() -> Row:
    """A row of no request yet."""
    return [0.0] * (2 + len(DURATION_BOUNDS))


def multiprocess_directory() -> str | None:
    """The directory every worker of `--workers N` keeps its figures in, else None."""
    return os.environ.get(MULTIPROCESS_DIRECTORY) or None


class Tally:
    """This process's requests, as rows by operation, then by status."""

    def __init__(self) -> None:
        self.operations: dict[str, ByStatus] = {}
        self.writing = False  # Whether this worker writes its file every `FLUSH_S`.
        self.written: Rows = {}

    def of(self, operation: str) -> ByStatus:
        """The rows of `operation`. A caller may keep them, because they are this tally's own.

        Under `--workers`, the first call starts writing this worker's file.
        """
        if not self.writing and multiprocess_directory():
            self.writing = True
            asyncio.get_running_loop().call_later(FLUSH_S, self.write)
        return self.operations.setdefault(operation, {})

    def snapshot(self) -> Rows:
        """A copy of the figures, by operation and status label."""
        return {
            (operation, NO_ANSWER if status is None else str(status)): list(row)
            for operation, rows in self.operations.items()
            for status, row in rows.items()
        }

    def write(self) -> None:
        """Replace this worker's file with its figures if they changed, and do it again `FLUSH_S` later.

        The file is replaced whole, so a reader sees the old file or the new one.
        """
        asyncio.get_running_loop().call_later(FLUSH_S, self.write)
        directory = multiprocess_directory()
        rows = self.snapshot()
        if not directory or rows == self.written:
            return
        lines = [[operation, status, *row] for (operation, status), row in rows.items()]
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False, encoding="utf-8") as file:
            json.dump(lines, file)
        os.replace(file.name, Path(directory) / f"{FILE_PREFIX}{os.getpid()}{FILE_SUFFIX}")
        self.written = rows


def other_workers(directory: str, own: Rows) -> Rows:
    """`own` added to the figures every other worker wrote in `directory`."""
    total = {key: list(row) for key, row in own.items()}
    mine = f"{FILE_PREFIX}{os.getpid()}{FILE_SUFFIX}"
    for path in Path(directory).glob(f"{FILE_PREFIX}*{FILE_SUFFIX}"):
        if path.name == mine:
            continue
        for operation, status, *row in json.loads(path.read_text(encoding="utf-8")):
            into = total.setdefault((operation, status), [0.0] * len(row))
            for index, value in enumerate(row):
                into[index] += value
    return total


class RequestFigures(Collector):
    """The requests counter and the duration histogram, made of `rows` when scraped."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        requests = CounterMetricFamily(
            "shop_mock_requests", "Requests answered, by operation and status.", labels=["operation", "status"]
        )
        durations = HistogramMetricFamily(
            "shop_mock_request_duration_seconds",
            "Time from a request's arrival to its answer's last byte, by operation.",
            labels=["operation"],
        )
        by_operation: dict[str, Row] = {}
        for (operation, status), row in sorted(self.rows.items()):
            requests.add_metric([operation, status], sum(row[1:]))
            into = by_operation.setdefault(operation, [0.0] * len(row))
            for index, value in enumerate(row):
                into[index] += value
        for operation, (total, *buckets) in by_operation.items():
            cumulative = zip(BUCKET_LABELS, itertools.accumulate(buckets), strict=True)
            durations.add_metric([operation], list(cumulative), total)
        yield requests
        yield durations


TALLY = Tally()
