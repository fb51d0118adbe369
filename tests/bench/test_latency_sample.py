"""`foretab bench latency --n N` draws its questions from the whole dataset."""

from __future__ import annotations

from foretab.bench.perf.latency import sample_questions


def test_the_sample_spans_the_file_and_keeps_its_order() -> None:
    # a built file is ordered by template: its first 1,000 were three families only
    questions = [f"family {i // 100} question {i}" for i in range(1000)]
    picked = sample_questions(questions, 50, seed=0)
    assert len(picked) == 50 == len(set(picked))
    assert picked == sorted(picked, key=questions.index)
    assert len({q.split()[1] for q in picked}) >= 8  # of the 10 families
    assert picked == sample_questions(questions, 50, seed=0)
    assert picked != sample_questions(questions, 50, seed=1)


def test_zero_or_more_than_there_are_is_all() -> None:
    questions = ["a", "b", "c"]
    assert sample_questions(questions, 0, seed=0) == questions
    assert sample_questions(questions, 10, seed=0) == questions
