"""Load evaluation datasets (samples): ragmeter's YAML/JSON/JSONL, and every other source :mod:`ragmeter.io.sample_sources` reads.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "d.yaml"
>>> _ = p.write_text("samples:\\n  - id: q-1\\n    expected_output: [a, b]\\n")
>>> [s.id for s in load_dataset(p)]
['q-1']
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.io.sample_sources import read_samples
from ragmeter.schema.samples import Sample


def load_dataset(path: str | Path) -> list[Sample]:
    """Read every sample of a dataset file or folder; ids must be unique."""
    return read_samples(Path(path))[0]
