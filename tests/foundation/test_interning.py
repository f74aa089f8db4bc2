"""The compiled string table (``ragmeter._intern``) gives the codes of the Python one, value for value."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter.agentic.columnar_read as columnar_read
from ragmeter import interning
from ragmeter.agentic import evaluate_agentic
from ragmeter.interning import PyInterner

Compiled: Any = interning.Interner


def _copy(value: Any) -> Any:
    """An equal value that is another object (a str read twice from a file is two objects)."""
    if type(value) is str:
        return "".join(list(value)) if len(value) != 1 else (value + "x")[:1]
    return value


# Strings of every width Python stores (ASCII, Latin-1, two-byte, four-byte), ints whose hashes
# share their high half (all small ones) or collide outright (hash(-1) == hash(-2)), and None.
_VALUES = st.one_of(
    st.none(),
    st.text(alphabet="ab", max_size=3),
    st.text(alphabet="aé€😀 ", max_size=4),
    st.integers(-3, 3),
    st.integers().map(lambda i: i * 2**40),
    st.sampled_from(["1", "-1", "", " "]),
)


def _same(items: list[Any], attr: str | None = None) -> tuple[Any, PyInterner]:
    compiled, python = Compiled(), PyInterner()
    assert compiled.codes(items, attr) == python.codes(items, attr)
    assert compiled.values == python.values and len(compiled) == len(python)
    return compiled, python


def test_the_compiled_table_is_built() -> None:
    # `pip install -e .` builds it (the ext-module is optional, so a failed build would pass silently).
    assert interning.Interner is not PyInterner
    assert Compiled.__module__ == "ragmeter._intern"


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_VALUES, max_size=80), more=st.lists(_VALUES, max_size=40))
def test_codes_are_the_python_tables(values: list[Any], more: list[Any]) -> None:
    compiled, python = _same(values)
    again = [_copy(v) for v in values] + more
    assert compiled.codes(again) == python.codes(again)
    assert compiled.values == python.values
    for value in [*values, *more, "absent", 99, None]:
        assert compiled.get(value) == python.get(value)
        assert compiled.get(_copy(value)) == python.get(value)
    assert compiled.values == python.values  # get adds nothing


@settings(max_examples=100, deadline=None)
@given(values=st.lists(_VALUES, max_size=60))
def test_codes_of_an_attribute_and_of_a_tuple(values: list[Any]) -> None:
    items = [SimpleNamespace(url=v) for v in values]
    _same(items, "url")
    _same(tuple(values))


def test_a_table_grows_past_many_values_with_equal_hash_halves() -> None:
    # Small ints hash to themselves: every tag is 0, and multiples of 2**20 share home slots.
    values = [i * 2**20 for i in range(5000)] + [str(i) for i in range(50_000)] + [None]
    compiled, python = _same(values + values[::-1])
    assert len(compiled) == 55_001
    assert compiled.codes([_copy(v) for v in values]) == python.codes(values)


def test_take_empties_the_table() -> None:
    compiled, python = _same(["a", "b", None, "a"])
    assert compiled.take() == python.take() == [None, "a", "b"]
    assert compiled.values == python.values == [None]
    assert compiled.get("a") is python.get("a") is None
    assert compiled.codes(["b", "c"]) == python.codes(["b", "c"])
    assert compiled.values == [None, "b", "c"]


def test_bad_items_raise_and_leak_nothing() -> None:
    table = Compiled()
    table.codes(["kept"])
    with pytest.raises(TypeError):
        table.codes(["a", ["unhashable"]])
    with pytest.raises(AttributeError):
        table.codes([SimpleNamespace(url="x"), object()], "url")
    with pytest.raises(TypeError):
        table.codes(42)
    with pytest.raises(TypeError):
        table.codes(["a"], 3)
    with pytest.raises(TypeError):
        table.get([])
    with pytest.raises(TypeError):
        Compiled("extra")
    assert table.values[:2] == [None, "kept"]
    marker = "a value held only by the table " + str(id(table))
    before = sys.getrefcount(marker)
    table.codes([marker, marker])
    assert sys.getrefcount(marker) == before + 1  # the table's own reference, once
    table.take()
    gc.collect()
    assert sys.getrefcount(marker) == before


def test_the_agentic_fast_path_gives_the_same_json_on_the_python_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": ['
        '{"url": "https://a.org/x?utm_source=q", "title": "Tea", "snippet": "Green tea, brewed", "gain": 2},'
        '{"url": "http://www.a.org/x/", "title": "tea", "snippet": "green tea brewed", "gain": 1},'
        '{"id": 7, "title": "Caf\\u00e9", "snippet": "\\u00e9t\\u00e9 \\ud83d\\ude00"}]}]},'
        '{"searches": [{"results": [{"domain_id": "DOI:10.1/X", "url": "https://b.org"}]}]}]}]}',
        '{"trace_id": 2, "turns": [{"iterations": [{"searches": [{"results": ['
        '{"id": "7", "url": "https://b.org/", "gain": 3}, {"domain_id": "doi:10.1/x", "title": "x"}]}]}]}]}',
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    compiled = evaluate_agentic(path).to_json_dict()
    made: list[PyInterner] = []

    class Counted(PyInterner):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    for module in (columnar_read, interning):  # the reader's tables, and the keys' (first_seen_codes)
        monkeypatch.setattr(module, "Interner", Counted)
    python = evaluate_agentic(path).to_json_dict()
    assert len(made) >= 3 + 3  # ids, URLs, texts; the keys' domain ids, generic ids, normalised texts
    reference = evaluate_agentic(path, engine="reference").to_json_dict()
    for result in (compiled, python, reference):
        result["provenance"].pop("created_at")
    assert compiled == python == reference


@settings(max_examples=300, deadline=None)
@given(a=_VALUES, b=_VALUES)
def test_the_tables_comparison_is_pythons(a: Any, b: Any) -> None:
    from ragmeter._intern import _equal  # type: ignore[attr-defined]

    assert _equal(a, b) == (a == b)
    assert _equal(a, _copy(a))
    assert not _equal("ab", "ba") and not _equal("a€", "b€") and not _equal("é", "e")
    assert not _equal("ab", "\u6261\u20ac")  # the same first bytes, stored two bytes a character


class _Meddler:
    """A value whose hash or comparison runs code that changes the list or the table being used."""

    def __init__(self, on_hash: Any = None, on_eq: Any = None, hash_: int = 1) -> None:
        self.on_hash, self.on_eq, self.hash = on_hash, on_eq, hash_

    def __hash__(self) -> int:
        if self.on_hash is not None:
            self.on_hash()
        return self.hash

    def __eq__(self, other: object) -> bool:
        if self.on_eq is not None:
            self.on_eq()
        return self is other


def test_code_that_changes_the_list_or_the_table_meanwhile_is_survived() -> None:
    table = Compiled()
    items: list[Any] = ["a", "b"]
    items.insert(1, _Meddler(on_hash=items.clear))
    with pytest.raises(RuntimeError, match="changed size"):
        table.codes(items)
    table = Compiled()
    table.codes(list(range(1000, 1100)))  # a larger table: its slot for hash 200 is not the new one's
    first = _Meddler(hash_=200)
    table.codes([first])
    first.on_eq = table.take  # the next lookup compares with the first, which empties the table
    second = _Meddler(hash_=200)
    codes = table.codes([second])
    assert list(memoryview(codes).cast("i")) == [1] and table.values == [None, second]
    assert table.get(second) == 1  # in its place in the new table
