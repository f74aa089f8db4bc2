from pathlib import Path
from typing import Any


def test_a_missing_run_file_is_one_line_naming_it(refused: Any, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    refused(["eval", "--qrels", "qrels.txt", "--run", "nope.txt", "-m", "map"], "nope.txt")


def test_a_plain_trec_pair_is_accepted(accepted: Any, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    assert "1.0" in accepted(["eval", "--qrels", "qrels.txt", "--run", "run.txt", "-m", "map"])
