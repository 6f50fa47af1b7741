"""Question-level splits of `eko bench context`: stable, disjoint, about 70/30."""

from __future__ import annotations

from datetime import datetime

from eko_bench.context.data import (
    Conversation,
    Question,
    in_question_split,
    question_bucket,
    select_split,
)


def _conversation(sample_id: str, n: int) -> Conversation:
    questions = [
        Question(f"Question number {i} about {sample_id}?", 1 + i % 4, []) for i in range(n)
    ]
    return Conversation(sample_id, ("A", "B"), [(datetime(2023, 5, 1), [])], questions, [[]])


def test_the_bucket_is_a_stable_hash_of_conversation_and_question() -> None:
    # Fixed values: a change of the hash would silently move questions between dev and test.
    assert question_bucket("conv-26", "Q?") != question_bucket("conv-30", "Q?")
    assert f"{question_bucket('conv-26', 'What did Caroline research?'):.6f}" == "0.255090"


def test_dev_q_and_test_q_partition_every_conversation_about_70_30() -> None:
    conversations = [_conversation("conv-1", 400), _conversation("conv-2", 400)]
    dev = select_split(conversations, "dev-q")
    test = select_split(conversations, "test-q")
    assert [c.sample_id for c in dev] == [c.sample_id for c in test] == ["conv-1", "conv-2"]
    for whole, d, t in zip(conversations, dev, test, strict=True):
        dev_texts = {q.text for q in d.questions}
        test_texts = {q.text for q in t.questions}
        assert not dev_texts & test_texts
        assert dev_texts | test_texts == {q.text for q in whole.questions}
        assert 0.22 < len(test_texts) / len(whole.questions) < 0.38
    # Same answer on every call and for a copy of the data (no dependence on order or run).
    again = select_split(list(reversed(conversations)), "test-q")
    assert sorted(q.text for c in again for q in c.questions) == sorted(
        q.text for c in test for q in c.questions
    )


def test_conversation_splits_keep_every_question() -> None:
    conversation = _conversation("conv-26", 10)
    assert in_question_split("conv-26", "anything", "all")
    assert select_split([conversation], "dev")[0].questions == conversation.questions
    assert select_split([conversation], "test") == []
