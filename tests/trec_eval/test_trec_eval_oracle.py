"""``ragmeter trec_eval`` against trec_eval 10.0's own expected outputs, byte for byte.

Each case is one line of trec_eval's ``make quicktest`` whose options ragmeter reads
(``../shared/oracle/trec_eval/README.md`` names the command behind each file); the output
must equal the file exactly, not to 4 decimals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ORACLE = Path(__file__).resolve().parents[3] / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():
    ORACLE = Path("/work/shared/oracle/trec_eval")

pytestmark = pytest.mark.skipif(not ORACLE.is_dir(), reason=f"trec_eval oracle data not found at {ORACLE}")

PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
    "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20"
)
CASES = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.meas_params", f"{PARAMS} qrels.test results.test"),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
]


def _argv(command: str) -> list[str]:
    return [arg if not (ORACLE / arg).is_file() else str(ORACLE / arg) for arg in command.split()]


@pytest.mark.parametrize(("expected", "command"), CASES, ids=[f"{e}:{c.split()[-2]}" for e, c in CASES])
def test_output_is_byte_identical_to_trec_eval(expected: str, command: str, cli: Any) -> None:
    code, out, err = cli(["trec_eval", *_argv(command)])
    assert code == 0, err
    assert out.encode() == (ORACLE / expected).read_bytes()


def test_the_python_api_gives_the_same_text() -> None:
    from ragmeter.evaluation.trec_eval import TrecEvalOptions, trec_eval
    from ragmeter.report.trec_eval_text import report_text

    report = trec_eval(
        ORACLE / "qrels.test", ORACLE / "results.test", TrecEvalOptions(measures=["all_trec"], per_query=True)
    )
    assert report_text(report) == (ORACLE / "out.test.aq").read_text()
    assert report.topics == ["301", "302", "303"]
    assert report.run_id == "STANDARD"
