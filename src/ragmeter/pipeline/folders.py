"""Folder selection: choose the top-level folders whose notes best match the question.

A folder's score is the sum of its ``top_n`` best chunk scores for the question
(the same normalised BM25 scores retrieval uses). Folders scoring at least
``keep_fraction`` of the best folder's score are selected, in score order (ties
by name). When no folder scores above 0 nothing is known, and every folder is
selected. Notes at the vault root belong to no folder: they are always
searched and never listed.

>>> sel = select_folders(np.array([0.9, 0.2, 0.6, 0.1]), ["work", "work", "personal", "learning"],
...                      keep_fraction=0.5, top_n=3)
>>> sel.selected, sel.folder_scores
(['work', 'personal'], {'work': 1.1, 'personal': 0.6, 'learning': 0.1})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.pipeline.retrieval import BoolArray, FloatArray


@dataclass(frozen=True)
class FolderSelection:
    """The folders chosen for one question and every folder's score."""

    selected: list[str]
    folder_scores: dict[str, float]

    def mask(self, folders: Sequence[str]) -> BoolArray:
        """True for the chunks in a selected folder or at the vault root.

        >>> FolderSelection(["a"], {}).mask(["a", "b", ""]).tolist()
        [True, False, True]
        """
        keep = set(self.selected) | {""}
        return np.array([f in keep for f in folders], dtype=np.bool_)


def select_folders(
    scores: FloatArray, folders: Sequence[str], *, keep_fraction: float, top_n: int
) -> FolderSelection:
    """Select the folders whose summed top-``top_n`` chunk scores reach ``keep_fraction`` of the best."""
    per_folder: dict[str, list[float]] = {}
    for score, folder in zip(scores.tolist(), folders, strict=True):
        if folder:
            per_folder.setdefault(folder, []).append(float(score))
    totals = {f: round(sum(sorted(v, reverse=True)[:top_n]), 6) for f, v in per_folder.items()}
    ordered = dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))
    best = max(ordered.values(), default=0.0)
    if best <= 0.0:
        return FolderSelection(sorted(ordered), ordered)
    return FolderSelection([f for f, s in ordered.items() if s >= keep_fraction * best], ordered)
