"""A run file rewritten while ragmeter reads it: one error line, never a dead process.

A file that shrinks under a memory map kills the reading process with SIGBUS. Each
test shrinks the file at a chosen moment in a child process (through a hook on one
internal step, the only way to make the race deterministic) and expects ragmeter to
finish with an error that names the file.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def run_child(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write_run(path: Path, topics: int = 40, depth: int = 100) -> Path:
    lines = (f"q{t} Q0 doc-{t}-{r} {r + 1} {1000 - r}.5 sys\n" for t in range(topics) for r in range(depth))
    path.write_text("".join(lines), encoding="utf-8")
    return path


SHRINK_WHILE_PARSING = """
    import sys
    from pathlib import Path

    import pyarrow as pa

    import ragmeter.io.trec as trec
    from ragmeter.cli import main

    qrels, run = sys.argv[1], Path(sys.argv[2])
    pa.set_cpu_count(2)
    trec._PARALLEL_BYTES, trec._SLICE_BYTES = 1, 1 << 14  # slices of 16 KiB, on two threads
    parse, slices, reading_run = trec._parse, trec._parse_slices, []

    def note_the_run(path, *args, **kwargs):
        reading_run.append(path == run)
        return slices(path, *args, **kwargs)

    def shrink_then_parse(*args, **kwargs):
        if reading_run[-1:] == [True]:  # the first slice of the run: the writer starts over
            reading_run.append(False)
            run.write_bytes(b"q0 Q0 doc-0-0 1 1.0 sys\\n")
        return parse(*args, **kwargs)

    trec._parse_slices = note_the_run
    trec._parse = shrink_then_parse
    main(["eval", "--qrels", qrels, "--run", str(run), "-m", "map"])
"""


def test_a_run_that_shrinks_while_it_is_read_in_slices_is_an_error(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q0 0 doc-0-0 1\n", encoding="utf-8")
    run = write_run(tmp_path / "run")
    assert run.stat().st_size > 4 * (1 << 14)
    child = run_child(SHRINK_WHILE_PARSING, str(qrels), str(run))
    assert child.returncode == 2, (child.returncode, child.stderr[-2000:])
    assert child.stderr.startswith(f"Error: {run}: the file changed while it was read")
    assert len(child.stderr.strip().splitlines()) == 1


SHRINK_WHILE_HASHING = """
    import hashlib
    import sys
    from pathlib import Path

    import ragmeter.io.digests as digests
    from ragmeter.errors import InputError

    path = Path(sys.argv[1])
    digests._STEP = 1 << 12

    class Shrinking:
        def __init__(self):
            self.inner, self.shrunk = hashlib.sha256(), False

        def update(self, data):
            if not self.shrunk:
                self.shrunk = True
                path.write_bytes(b"short")
            self.inner.update(data)

        def hexdigest(self):
            return self.inner.hexdigest()

    digests.hashlib = type("hashlib", (), {"sha256": Shrinking})
    try:
        digests.file_sha256(path)
    except InputError as error:
        print(error)
"""


def test_a_file_that_shrinks_while_it_is_hashed_is_an_error(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", topics=10)
    child = run_child(SHRINK_WHILE_HASHING, str(run))
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.startswith(f"{run}: the file changed while it was read")


@pytest.mark.parametrize("size", ["larger", "smaller"])
def test_a_file_replaced_before_reading_is_read_as_it_is_now(tmp_path: Path, size: str) -> None:
    from ragmeter.io import digests
    from ragmeter.io.trec import read_run

    run = write_run(tmp_path / "run", topics=3, depth=5)
    digests.hash_in_background([run])
    write_run(run, topics=4 if size == "larger" else 2, depth=5)
    assert len(read_run(run)) == (20 if size == "larger" else 10)
    import hashlib

    assert digests.file_sha256(run) == hashlib.sha256(run.read_bytes()).hexdigest()
