"""Judge reliability spot-check: seeded subset, second judge, disagreement rate, Cohen's kappa, n."""

from __future__ import annotations

import judge_chat_server as cs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import ConfigError
from ragmeter.judges import run_judges
from ragmeter.judges.reliability import cohen_kappa, disagrees, select_subset, subset_size

N = 40
ITEMS = [
    {"id": f"q{i:02d}", "question": f"question number {i:02d}?", "answer": "an answer", "contexts": ["c"]}
    for i in range(N)
]


def number(body: dict) -> int:
    return int(body["messages"][-1]["content"].split("question number ")[1][:2])


def primary_score(i: int) -> int:
    return i % 6


def second_score(i: int) -> int:
    # agrees exactly on most items, off by one on some, off by two (a disagreement) on others
    return [primary_score(i), min(5, primary_score(i) + 1), max(0, primary_score(i) - 2)][i % 3]


def kappa_by_hand(a: list[int], b: list[int]) -> float:
    labels = sorted(set(a) | set(b))
    index = {label: k for k, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    table /= table.sum()
    po = np.trace(table)
    pe = float(table.sum(axis=1) @ table.sum(axis=0))
    return (po - pe) / (1 - pe)


def test_second_model_spot_check(chat_server, judge_config) -> None:
    def script(body: dict) -> cs.Reply:
        i = number(body)
        score = primary_score(i) if body["model"] == "test-judge" else second_score(i)
        return cs.ok({"reasoning": "r", "score": score})

    server = chat_server(script)
    cfg = judge_config(server, reliability={"model": "judge-b", "fraction": 0.1, "min_n": 10, "seed": 3})
    result = run_judges(ITEMS, config=cfg, judges=["correctness"])

    chosen = select_subset([i["id"] for i in ITEMS], fraction=0.1, min_n=10, n=None, seed=3)
    assert len(chosen) == 10
    second_requests = [r for r in server.chat_requests if r["json"]["model"] == "judge-b"]
    assert sorted(f"q{number(r['json']):02d}" for r in second_requests) == chosen
    assert [o.item_id for o in result.reliability_outcomes] == chosen
    assert all(o.role == "reliability" for o in result.reliability_outcomes)

    a = [primary_score(int(q[1:])) for q in chosen]
    b = [second_score(int(q[1:])) for q in chosen]
    stats = result.judge_reliability["correctness"]
    assert stats.spot_check_n == 10
    assert stats.n_selected == 10 and stats.n_unscored == 0
    assert stats.disagreement_rate == pytest.approx(
        sum(abs(x - y) > 1 for x, y in zip(a, b, strict=True)) / 10
    )
    assert stats.kappa == pytest.approx(kappa_by_hand(a, b), abs=1e-6)
    assert stats.second_judge["model"] == "judge-b"
    assert stats.second_judge["option"] == "A: second model"
    assert stats.seed == 3
    # the report reads judge_reliability[metric] with these keys
    dumped = result.model_dump(mode="json")["judge_reliability"]["correctness"]
    assert {"disagreement_rate", "kappa", "spot_check_n"} <= set(dumped)
    # primary results are unaffected by the spot-check
    assert [o.value for o in result.outcomes] == [float(primary_score(i)) for i in range(N)]
    assert result.usage.calls == N + 10


def test_prompt_variant_spot_check(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 3}))
    cfg = judge_config(server, reliability={"prompt_versions": {"correctness": "v1-alt"}, "n": 4, "seed": 1})
    result = run_judges(ITEMS[:20], config=cfg, judges=["correctness"])
    versions = [r["headers"]["x-ragmeter-prompt"] for r in server.chat_requests]
    assert versions.count("correctness.v1") == 20
    assert versions.count("correctness.v1-alt") == 4
    stats = result.judge_reliability["correctness"]
    assert (stats.spot_check_n, stats.disagreement_rate) == (4, 0.0)
    assert stats.kappa is None
    assert stats.note == "kappa is undefined: both judges gave one and the same label to every item"
    assert stats.second_judge["option"] == "B: prompt variant"
    assert stats.second_judge["prompt_versions"] == {"correctness": "v1-alt"}


def test_binary_judges_and_unscored_in_spot_check(chat_server, judge_config) -> None:
    def script(body: dict) -> cs.Reply:
        i = number(body)
        if body["model"] == "judge-b" and i % 4 == 0:
            return cs.broken_json("???")
        abstained = i % 2 == 0 if body["model"] == "test-judge" else i % 3 == 0
        return cs.ok({"reasoning": "r", "abstained": abstained})

    server = chat_server(script)
    cfg = judge_config(server, reliability={"model": "judge-b", "n": 12, "seed": 5})
    result = run_judges(ITEMS, config=cfg, judges=["abstention"])
    stats = result.judge_reliability["abstained"]
    chosen = [
        int(q[1:]) for q in select_subset([i["id"] for i in ITEMS], fraction=0.1, min_n=10, n=12, seed=5)
    ]
    used = [i for i in chosen if i % 4 != 0]
    assert stats.n_selected == 12
    assert stats.spot_check_n == len(used)
    assert stats.n_unscored == 12 - len(used)
    a = [int(i % 2 == 0) for i in used]
    b = [int(i % 3 == 0) for i in used]
    assert stats.disagreement_rate == pytest.approx(
        sum(x != y for x, y in zip(a, b, strict=True)) / len(used)
    )
    assert stats.kappa == pytest.approx(kappa_by_hand(a, b), abs=1e-6)


def test_system_flags_are_not_spot_checked(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "abstained": True}))
    items = [{**i, "abstained": False} for i in ITEMS[:10]]
    cfg = judge_config(server, reliability={"model": "judge-b", "n": 5})
    result = run_judges(items, config=cfg, judges=["abstention"])
    assert server.chat_requests == []
    assert result.judge_reliability == {}


def test_identical_second_judge_is_refused(chat_server, judge_config) -> None:
    server = chat_server([])
    with pytest.raises(ConfigError, match="the second judge is identical to the first"):
        run_judges(ITEMS[:1], config=judge_config(server, reliability={"n": 1}), judges=["correctness"])


def test_reliability_requested_without_config(chat_server, judge_config) -> None:
    server = chat_server([])
    with pytest.raises(ConfigError, match=r"needs a judge\.reliability block"):
        run_judges(ITEMS[:1], config=judge_config(server), judges=["correctness"], reliability=True)


def test_reliability_can_be_switched_off(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 3}))
    cfg = judge_config(server, reliability={"model": "judge-b", "n": 2})
    result = run_judges(ITEMS[:4], config=cfg, judges=["correctness"], reliability=False)
    assert len(server.chat_requests) == 4
    assert result.judge_reliability == {}


def test_subset_size_rules() -> None:
    assert subset_size(200, fraction=0.05, min_n=10, n=None) == 10
    assert subset_size(400, fraction=0.05, min_n=10, n=None) == 20
    assert subset_size(3, fraction=0.1, min_n=10, n=None) == 3
    assert subset_size(100, fraction=0.1, min_n=10, n=500) == 100


def test_kappa_worked_example() -> None:
    # 10 items, 2 categories: agree on 7 (4 yes, 3 no); rater A says yes 6 times, B 5 times
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    # po = 0.7, pe = 0.6*0.5 + 0.4*0.5 = 0.5, kappa = 0.2/0.5 = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert disagrees(3, 5, binary=False) and not disagrees(3, 4, binary=False)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=40))
def test_kappa_properties(pairs: list[tuple[int, int]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    kappa = cohen_kappa(a, b)
    if kappa is None:
        assert len(set(a) | set(b)) == 1
        return
    assert -1 - 1e-9 <= kappa <= 1 + 1e-9
    assert kappa == pytest.approx(cohen_kappa(b, a))
    assert kappa == pytest.approx(kappa_by_hand(a, b))


@given(st.sets(st.text(min_size=1, max_size=5), min_size=0, max_size=60), st.integers(0, 2**31))
def test_subset_is_order_free_and_sized(units: set[str], seed: int) -> None:
    ordered = sorted(units)
    first = select_subset(ordered, fraction=0.1, min_n=3, n=None, seed=seed)
    second = select_subset(list(reversed(ordered)), fraction=0.1, min_n=3, n=None, seed=seed)
    assert first == second
    assert len(first) == subset_size(len(units), fraction=0.1, min_n=3, n=None)
    assert set(first) <= units
