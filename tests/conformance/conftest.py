"""Fixtures for the official-SDK conformance tests: a real tether-server, SDK clients, /metrics.

The server binary comes from the env var TETHER_SERVER_BIN (`tests/conformance/run.sh` needs it
too). It binds 127.0.0.1 port 0 and prints `Tether listening on http://HOST:PORT` as its first
stdout line; we read the URL from there and keep draining stdout (the server logs to it) so the
pipe never fills up.

With TETHER_BASE_URL set, no server is started: the tests run against that URL (a deployment:
`cargo xtask deploy --test` points them at nginx), and /metrics is the sum over the replicas
listed in TETHER_METRICS_URLS (comma-separated; default the base URL), since a balancer sends
each scrape to one replica only.
"""

from __future__ import annotations

import contextlib
import os
import re
import queue
import signal
import subprocess
import threading
import urllib.request
from typing import Iterator, Optional

import pytest
from openai import AsyncOpenAI, OpenAI

#: Every network wait in these tests is bounded by this many seconds.
TIMEOUT = 10.0
#: Any model name works with the simulator; this one shows up in the server's logs.
MODEL = "tether-conformance"


def _server_bin() -> str:
    value = os.environ.get("TETHER_SERVER_BIN")
    if not value:
        pytest.exit("TETHER_SERVER_BIN is not set: run tests/conformance/run.sh", returncode=2)
    if not os.access(value, os.X_OK):
        pytest.exit(f"TETHER_SERVER_BIN={value} is not an executable file", returncode=2)
    return value


@contextlib.contextmanager
def running_server(extra_args: list[str]) -> Iterator[str]:
    """A tether-server on 127.0.0.1 port 0 with `extra_args`; yields its URL, SIGTERMs it after."""
    args = [
        _server_bin(),
        "--addr", "127.0.0.1:0",
        "--static-dir", "/nonexistent",
        *extra_args,
    ]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    output: list[str] = []

    def drain() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, name="tether-server-stdout", daemon=True).start()
    url = None
    try:
        while url is None:
            line = lines.get(timeout=30)
            if line is None:
                child.wait(timeout=TIMEOUT)
                raise RuntimeError(
                    f"tether-server exited with code {child.returncode} before listening "
                    f"(args: {' '.join(args[1:])}); stdout:\n{''.join(output)}"
                )
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                url = match.group(1).rstrip("/")
    except queue.Empty:
        child.kill()
        raise RuntimeError("tether-server printed no 'listening on' line within 30 s") from None
    try:
        yield url
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                raise RuntimeError("tether-server ignored SIGTERM for 15 s")


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base_url = os.environ.get("TETHER_BASE_URL")
    if base_url:
        yield base_url.rstrip("/")
        return
    data_dir = tmp_path_factory.mktemp("tether-data")
    with running_server(["--tokens-per-second", "100000", "--data-dir", str(data_dir)]) as url:
        yield url


@pytest.fixture(scope="session")
def client(server_url: str) -> OpenAI:
    return OpenAI(
        base_url=f"{server_url}/v1",
        api_key="test",
        _strict_response_validation=True,
        timeout=TIMEOUT,
        max_retries=0,
    )


@pytest.fixture
def async_client(server_url: str) -> AsyncOpenAI:
    # Function-scoped: an AsyncOpenAI's connection pool belongs to one event loop.
    return AsyncOpenAI(
        base_url=f"{server_url}/v1",
        api_key="test",
        _strict_response_validation=True,
        timeout=TIMEOUT,
        max_retries=0,
    )


def metrics_urls(server_url: str) -> list[str]:
    """Where /metrics is read: every replica of a deployment, or the one server."""
    listed = os.environ.get("TETHER_METRICS_URLS", "")
    urls = [url.strip().rstrip("/") for url in listed.split(",") if url.strip()]
    return urls if os.environ.get("TETHER_BASE_URL") and urls else [server_url]


class Metrics:
    """Reads Prometheus text from `GET /metrics` (summed over a deployment's replicas)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    def texts(self) -> list[str]:
        texts = []
        for url in self.urls:
            with urllib.request.urlopen(f"{url}/metrics", timeout=TIMEOUT) as response:
                assert response.status == 200, f"GET {url}/metrics answered {response.status}"
                texts.append(response.read().decode())
        return texts

    def value(self, series: str) -> float:
        """The value of one series, e.g. `tether_cache_lookups_total{result="hit"}`."""
        total, found = 0.0, False
        texts = self.texts()
        for text in texts:
            for line in text.splitlines():
                if line.startswith("#"):
                    continue
                name, _, rest = line.rpartition(" ")
                if name.replace(" ", "") == series.replace(" ", ""):
                    total += float(rest)
                    found = True
                    break
        if not found:
            raise AssertionError(f"/metrics has no series {series}; it has:\n{texts[0]}")
        return total

    def cache_lookups(self) -> dict[str, float]:
        return {
            result: self.value(f'tether_cache_lookups_total{{result="{result}"}}')
            for result in ("hit", "store", "miss")
        }


@pytest.fixture
def metrics(server_url: str) -> Metrics:
    return Metrics(metrics_urls(server_url))


#: Where `cargo xtask setup` installs llmsim (TETHER_LLMSIM_BIN overrides it).
LLMSIM_BIN = os.environ.get("TETHER_LLMSIM_BIN") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "tools", "llmsim", "bin", "llmsim"
)


@contextlib.contextmanager
def running_llmsim(script: dict, workdir: str) -> Iterator[str]:
    """llmsim (an OpenAI-compatible server nobody here wrote) playing `script`, in its instant
    latency profile, on a port the OS just handed out; yields its OpenAI base URL."""
    import json
    import socket
    import time

    script_path = os.path.join(workdir, "llmsim-script.json")
    with open(script_path, "w") as file:
        json.dump(script, file)
    for _ in range(5):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = os.path.join(workdir, "llmsim.toml")
        with open(config, "w") as file:
            file.write(
                f'[server]\nport = {port}\nhost = "127.0.0.1"\n[latency]\nprofile = "instant"\n'
                f"[response]\nscript_path = {json.dumps(script_path)}\n"
            )
        child = subprocess.Popen(
            [LLMSIM_BIN, "serve", "--config", config],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        listening = False
        while time.monotonic() < deadline and child.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                listening = True
                break
            except OSError:
                time.sleep(0.02)
        if listening:
            try:
                yield f"http://127.0.0.1:{port}/openai/v1"
            finally:
                child.terminate()
                child.wait(timeout=15)
            return
        child.kill()
        child.wait()
    raise RuntimeError("llmsim did not start listening within 20 s (five ports tried)")
