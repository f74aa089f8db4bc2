"""Load evaluation datasets (samples) from YAML, JSON or JSONL.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "d.yaml"
>>> _ = p.write_text("samples:\\n  - id: q-1\\n    expected_output: [a, b]\\n")
>>> [s.id for s in load_dataset(p)]
['q-1']
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.io.records import read_record_list, validate
from ragmeter.schema.samples import Sample


def load_dataset(path: str | Path) -> list[Sample]:
    """Read every sample of a dataset file; ids must be unique."""
    path = Path(path)
    samples: list[Sample] = []
    first_seen: dict[str, str] = {}
    for record in read_record_list(path, key="samples"):
        if not isinstance(record.value, dict):
            raise InputError(
                f"a sample must be an object, got {type(record.value).__name__}", where=record.where
            )
        if "id" not in record.value:
            raise InputError("sample has no 'id'", where=record.where)
        sample = validate(Sample, record.value, where=f"{record.where} (sample {record.value['id']!r})")
        if sample.id in first_seen:
            raise InputError(
                f"duplicate sample id {sample.id!r} (first at {first_seen[sample.id]})", where=record.where
            )
        first_seen[sample.id] = record.where
        samples.append(sample)
    return samples
