"""Types of the compiled TREC scan (src/ragmeter/_trec_scan.c; see ragmeter.io.trec_scan)."""

from typing import Any

def scan(
    data: Any,
    start: int,
    stop: int,
    fields: int,
    value_field: int,
    whole: bool,
    delimiter: int,
    offsets: Any,
    bytes: Any,
    values: Any,
    most_runs: int,
    /,
) -> tuple[int, int, list[str], bytes] | None: ...
def xor_docno_hashes(bounds: Any, wide: bool, data: Any, out: Any, /) -> None: ...
