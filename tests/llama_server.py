"""llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`, the package's
[server] extra) on 127.0.0.1, for tests that point the openai judge at a real local server.

    with LlamaServer(gguf_path, log=tmp / "server.log") as server:
        run_cli("score", ..., "--judge", "openai", "--base-url", server.url, "--model", server.alias)
        server.requests()   # chat completions it has answered so far, read from its access log
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

#: Each chat completion request, as uvicorn's access log prints it.
CHAT_REQUEST = re.compile(r'"POST /v1/chat/completions HTTP/[0-9.]+"')
#: Never through a proxy, whatever the environment says: the server is on this machine.
_LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def local_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) for a client of a 127.0.0.1 server: no proxy, no API key."""
    env = dict(os.environ if env is None else env)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _server_env() -> dict[str, str]:
    """This environment without what llama_cpp.server would read as its settings: they are
    pydantic-settings fields (MODEL, N_CTX, API_KEY, SEED, ... in any case), and HOST, PORT and
    CONFIG_FILE override the command line."""
    from llama_cpp.server.settings import Settings

    names = {name.lower() for name in Settings.model_fields} | {"host", "port", "config_file"}
    env = {key: value for key, value in local_env().items() if key.lower() not in names}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class LlamaServer:
    """`python -m llama_cpp.server` serving one GGUF file on a free port of 127.0.0.1.

    Started on `__enter__` (returns when GET /v1/models lists the model), terminated on
    `__exit__`. Its output goes to `log`; `requests()` counts the chat completions in it.
    `seed` is the server's own: requests without a seed draw theirs from it in turn, so the
    same requests in the same order after a start get the same samples.
    """

    def __init__(self, model: str | Path, log: Path, alias: str = "local-gguf", n_ctx: int = 4096,
                 seed: int = 1234, threads: int | None = None, startup_timeout: float = 180.0):
        self.model, self.log, self.alias = Path(model), Path(log), alias
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        threads = threads or os.cpu_count() or 2
        self.command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx), "--seed", str(seed),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--verbose", "False",
        ]
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Self:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=_server_env())
        try:
            self._wait_until_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with _LOCAL.open(f"{self.url}/models", timeout=5) as answer:
                    models = [entry["id"] for entry in json.load(answer)["data"]]
                if models != [self.alias]:  # someone else's server took the port
                    raise RuntimeError(f"{self.url} serves {models}, not {self.alias}")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer within {self.startup_timeout:.0f} s:\n"
                                   f"{self.log_tail()}")
            time.sleep(0.5)

    def requests(self) -> int:
        """How many chat completions the server has been sent so far (its access log)."""
        return len(CHAT_REQUEST.findall(self.log.read_text(errors="replace")))

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def close(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 20 s) and reap it."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
