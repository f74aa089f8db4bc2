"""Scripted ``python:`` solvers for the mining tests (imported by the solver hook, by name)."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any


def planted(
    request: dict[str, Any], *, hit: float = 0.9, base: float = 0.1, delay: float = 0.0, calls_file: str = ""
) -> str:
    """Answer ``4417`` with probability ``hit`` when ``zz.planted`` is shown, else with ``base``."""
    if delay:
        time.sleep(delay)
    if calls_file:
        trial = request["trial"]
        with Path(calls_file).open("a", encoding="utf-8") as handle:
            handle.write(f"{request['pair_id']} {trial['kind']} {trial['index']} {os.getpid()}\n")
    shown = {doc["id"] for doc in request["documents"]}
    rng = random.Random(request["trial"]["seed"])
    p = hit if "zz.planted" in shown else base
    return "4417" if rng.random() < p else "I do not know"


def escape_code(request: dict[str, Any], *, target: str, port: int) -> str:
    """Code that tries to write ``target`` (outside its folder) and connect to 127.0.0.1:``port``."""
    return f"""```python
import socket


def probe():
    result = {{}}
    try:
        with open({target!r}, "w") as handle:
            handle.write("escaped")
        result["write"] = "ok"
    except OSError:
        result["write"] = "blocked"
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
        result["socket"] = "ok"
    except OSError:
        result["socket"] = "blocked"
    return result
```"""


def broken(request: dict[str, Any]) -> str:
    """Always fails to answer (the trial is an error, not a fail)."""
    raise RuntimeError("model unavailable")
