"""The executor interface without Ray: the local executor, the CLI options and their errors, and
that ``ray`` is never imported unless asked for."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.errors import ConfigError
from ragmeter.executors import make_executor
from ragmeter.executors.base import RAY_MISSING, current_executor, use_executor
from ragmeter.executors.local import LocalExecutor

HERE = Path(__file__).resolve().parent


def _trec_eval(folder: Path) -> list[str]:
    """``eval`` of a one-line qrels and run written into ``folder``."""
    (folder / "q").write_text("q1 0 a 1\n", encoding="utf-8")
    (folder / "r").write_text("q1 Q0 a 1 1.0 r\n", encoding="utf-8")
    return ["eval", "--qrels", str(folder / "q"), "--run", str(folder / "r")]


@pytest.fixture
def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_executors_cli_and_local_runs_never_import_ray(tmp_path: Path, write_suite: Any) -> None:
    suite = write_suite(tmp_path)
    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq2 0 b 1\n", encoding="utf-8")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 1.0 r\nq2 Q0 c 1 1.0 r\n", encoding="utf-8")
    trec = ["--qrels", "q.qrels", "--run", "r.run", "--json"]
    script = textwrap.dedent(
        f"""
        import sys
        import ragmeter.cli
        assert "ray" not in sys.modules, "import ragmeter.cli imported ray"
        from ragmeter.cli import main
        for argv in (
            ["--help"],
            ["eval", "--help"],
            ["run", {str(suite)!r}, "-q", "--no-report", "--no-record"],
            ["eval", *{trec!r}],
            ["eval", *{trec!r}, "--executor", "local"],
        ):
            try:
                main(argv)
            except SystemExit as exc:
                assert exc.code in (0, None), (argv, exc.code)
        print("ray imported:", "ray" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "ray imported: False" in done.stdout
    assert (tmp_path / "out" / "outputs.jsonl").is_file()


@pytest.mark.parametrize("command", ["run", "mine"])
def test_executors_ray_missing_is_one_line(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    code, out, err = cli([command, str(tmp_path / "whatever.yaml"), "--executor", "ray"])
    assert (code, out) == (2, "")
    assert err == f"Error: {RAY_MISSING}\n"
    assert err == "Error: --executor ray needs the 'ray' extra: pip install 'ragmeter[ray]'\n"


def test_executors_unreachable_ray_address_is_one_line(
    tmp_path: Path, cli: Any, closed_port: int, write_suite: Any
) -> None:
    suite = write_suite(tmp_path)
    address = f"127.0.0.1:{closed_port}"
    started = time.monotonic()
    code, out, err = cli(["run", str(suite), "--executor", "ray", "--ray-address", address])
    assert time.monotonic() - started < 10
    assert code == 2
    assert out == ""
    assert err == (
        f"Error: --ray-address: cannot reach a Ray cluster at {address} (connection refused); "
        "start one with 'ray start --head' or check the address\n"
    )
    assert not (tmp_path / "out").exists(), "the results folder is not touched before Ray is reached"


OPTION_ERRORS = [
    (["--executor", "dask"], "Error: --executor: must be local or ray, got 'dask'\n"),
    (["--ray-address", "auto"], "Error: --ray-address needs --executor ray\n"),
    (
        ["--executor", "ray", "--ray-address", "head"],
        "Error: --ray-address: 'head' is not a Ray address (auto, HOST:PORT or ray://HOST:PORT)\n",
    ),
]


@pytest.mark.parametrize(("args", "message"), OPTION_ERRORS)
def test_executors_option_errors(
    tmp_path: Path, cli: Any, write_suite: Any, args: list[str], message: str
) -> None:
    suite = write_suite(tmp_path)
    code, _, err = cli(["run", str(suite), *args])
    assert (code, err) == (2, message)


@pytest.mark.parametrize(("args", "message"), OPTION_ERRORS)
def test_executors_eval_option_errors(tmp_path: Path, cli: Any, args: list[str], message: str) -> None:
    code, out, err = cli([*_trec_eval(tmp_path), *args])
    assert (code, out, err) == (2, "", message)


def test_executors_eval_executor_needs_trec_files(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, closed_port: int
) -> None:
    dataset = tmp_path / "d.yaml"
    dataset.write_text("samples: []\n", encoding="utf-8")
    code, out, err = cli(["eval", "--dataset", str(dataset), "--executor", "ray"])
    assert (code, out, err) == (
        2,
        "",
        "Error: --executor and --ray-address apply to TREC runs (--qrels/--run) only\n",
    )
    trec = [*_trec_eval(tmp_path), "--executor", "ray"]
    code, out, err = cli([*trec, "--ray-address", f"127.0.0.1:{closed_port}"])
    assert (code, out) == (2, "") and err.startswith("Error: --ray-address: cannot reach a Ray cluster at ")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    assert cli(trec) == (2, "", f"Error: {RAY_MISSING}\n")


def test_executors_mine_unreachable_address_deletes_nothing(
    tmp_path: Path, cli: Any, closed_port: int
) -> None:
    out = tmp_path / "d.yaml"
    out.write_text("keep me\n", encoding="utf-8")
    registry = tmp_path / "registry.yaml"
    (tmp_path / "docs.jsonl").write_text('{"id": "a.b", "text": "a.b()"}\n', encoding="utf-8")
    registry.write_text(
        yaml.safe_dump(
            {
                "corpora": {"docs": {"file": "docs.jsonl"}},
                "solver": {
                    "kind": "python",
                    "function": "executors_test_systems:planted",
                    "python_path": [str(HERE)],
                },
                "benchmarks": [
                    {
                        "name": "b",
                        "corpus": "docs",
                        "validator": {"kind": "answer"},
                        "questions": [{"id": "q", "question": "Secret?", "answer": "4417"}],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    args = ["mine", str(registry), "--out", str(out), "--fresh", "--executor", "ray"]
    code, _, err = cli([*args, "--ray-address", f"127.0.0.1:{closed_port}"])
    assert code == 2 and "cannot reach a Ray cluster" in err
    assert out.read_text(encoding="utf-8") == "keep me\n", "--fresh deletes nothing before Ray is reached"


def test_executors_local_map_pool_and_limiter() -> None:
    executor = LocalExecutor(max_workers=3)
    assert sorted(executor.map_unordered(lambda x: x + 1, range(10))) == [(i, i + 1) for i in range(10)]

    def boom(x: int) -> int:
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        list(executor.map_unordered(boom, range(6)))

    started: list[int] = []
    pool = executor.pool({"base": 100}, name="t", size=1, per_worker=2, start=lambda s: started.append(1))
    assert pool.capacity == 2
    assert [pool.submit(lambda s, x: s["base"] + x, i).result() for i in range(3)] == [100, 101, 102]
    assert started == [1], "start runs once"

    limiter = executor.limiter("endpoint", 2)
    assert executor.limiter("endpoint", 5) is limiter
    inside = peak = 0
    lock = threading.Lock()

    def hold(_: int) -> None:
        nonlocal inside, peak
        with limiter.hold():
            with lock:
                inside += 1
                peak = max(peak, inside)
            time.sleep(0.05)
            with lock:
                inside -= 1

    list(LocalExecutor(max_workers=6).map_unordered(hold, range(12)))
    assert peak == 2
    executor.close()


def test_executors_use_executor_is_scoped() -> None:
    assert current_executor() is None
    local = make_executor("local")
    with use_executor(local):
        assert current_executor() is local
        seen: list[Any] = []
        thread = threading.Thread(target=lambda: seen.append(current_executor()))
        thread.start()
        thread.join()
        assert seen == [None], "other threads do not inherit it: judge clients read it when made"
    assert current_executor() is None


def test_executors_cli_options_are_documented() -> None:
    text = (HERE.parents[1] / "docs" / "scale.md").read_text(encoding="utf-8")
    for needle in (
        "--executor ray",
        "--ray-address",
        "ray start --head",
        "KubeRay",
        "runtime_env",
        "ragmeter[ray]",
    ):
        assert needle in text, needle


def test_executors_make_executor_errors() -> None:
    with pytest.raises(ConfigError, match="must be local or ray"):
        make_executor("threads")
    assert json.dumps(make_executor("local").describe()) == '{"kind": "local"}'
