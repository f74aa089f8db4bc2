"""The byte check of the fast TREC reader: its one-pass confirmation of printable ASCII files and
the full checks it falls back to give the same answer (see ``ragmeter.io.trec_bytes``)."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.io import trec_bytes


def _plain(data: bytes, *, rows: int, fields: int = 6, tab: bool = False) -> bool:
    return trec_bytes.plain(
        data, np.frombuffer(data, np.uint8), 0, len(data), rows=rows, fields=fields, tab=tab
    )


CASES = [
    (b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r\n", 2, False, True),
    (b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r", 2, False, True),  # no newline at the end
    (b"q1\tQ0\td1\t1\t2.5\tr\n", 1, True, True),
    (b"q1 Q0 d\xc3\xa9 1 2.5 r\n", 1, False, True),  # UTF-8 outside ASCII: the full checks accept it
    (b"q1 Q0 d1 1 2.5 r\r\n", 1, False, True),  # CRLF: a line end to both readers
    (b"q1 Q0 d\x7f 1 2.5 r\n", 1, False, False),  # DEL
    (b"q1 Q0 d\xc2\x85 1 2.5 r\n", 1, False, False),  # U+0085, a C1 control
    (b"q1 Q0 d\x0b 1 2.5 r\n", 1, False, False),  # vertical tab: white space to trec_eval
    (b"q1 Q0 d\r1 1 2.5 r\n", 1, False, False),  # a carriage return inside a line
    # a lone carriage return between two lines: pyarrow ends a row there, trec_eval does not
    (b"q1 Q0 d1 1 2.5 r\rq1 Q0 d2 2 1.5 r\n", 2, False, False),
    (b"q1\tQ0\td 1\t1\t2.5\tr\n", 1, True, False),  # a space in a tab-separated file
    (b"q1 Q0  d1 1 2.5 r\n", 1, False, False),  # two delimiters: an empty field
    (b"q1 Q0 d1 1 2.5 r \n", 1, False, False),  # a trailing delimiter
    (b"q1 Q0 d1 1 2.5 r\n\nq1 Q0 d2 2 1.5 r\n", 2, False, False),  # a blank line
]


@pytest.mark.parametrize(("data", "rows", "tab", "expected"), CASES)
def test_the_one_pass_and_the_full_checks_agree(
    data: bytes, rows: int, tab: bool, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _plain(data, rows=rows, tab=tab) is expected
    full = trec_bytes._low_bytes

    def without_one_pass(*args: object, printable: bool = False, **kwargs: int) -> tuple[int, int]:
        return (-1, -1) if printable else full(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(trec_bytes, "_low_bytes", without_one_pass)
    assert _plain(data, rows=rows, tab=tab) is expected


def test_the_one_pass_counts_every_byte_outside_printable_ascii() -> None:
    data = bytes(range(256))
    counted, _ = trec_bytes._low_bytes(np.frombuffer(data, np.uint8), 0, 256, limit=33, printable=True)
    assert counted == 256 - (0x7E - 0x21 + 1)
