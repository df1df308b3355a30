"""The offline Qwen2.5 tokenizer."""

from __future__ import annotations

from graphrag.text import tokens


def test_known_qwen_ids() -> None:
    assert tokens.encode("Hello world") == [9707, 1879]
    assert tokens.count_tokens("Hello world") == 2
    assert tokens.encode("") == []


def test_round_trip_keeps_text_exactly() -> None:
    text = "Kestrel Bay's KBMI — founded 1998 in Port Aldry.\n\tÜber café 海湾 🐟 <|im_end|>"
    assert tokens.decode(tokens.encode(text)) == text


def test_special_token_text_is_encoded_as_plain_text() -> None:
    ids = tokens.encode("<|im_end|>")
    assert tokens.SPECIAL_TOKENS["<|im_end|>"] not in ids
    assert len(ids) > 1


def test_digits_are_single_tokens() -> None:
    # Qwen's pre-tokenizer splits numbers into single digits
    assert tokens.count_tokens("2024") == 4


def test_truncate() -> None:
    text = "one two three four five six seven eight"
    assert tokens.count_tokens(text) == 8
    assert tokens.truncate(text, 3) == "one two three"
    assert tokens.truncate(text, 8) == text
    assert tokens.truncate(text, 100) is text
    assert tokens.truncate(text, 0) == ""


def test_pack_skips_or_stops_at_what_does_not_fit() -> None:
    texts = ["one two three", "a much longer text " * 20, "short"]
    costs = [tokens.count_tokens(t) + 2 for t in texts]
    budget = costs[0] + costs[2]
    assert tokens.pack(texts, budget, overhead=2) == [0, 2]  # the long one is skipped
    assert tokens.pack(texts, budget, overhead=2, skip=False) == [0]  # a table stops there
    assert tokens.pack(texts, sum(costs), overhead=2) == [0, 1, 2]
    assert tokens.pack(texts, 0) == []


def test_batches_split_in_order_and_give_an_oversized_text_its_own() -> None:
    texts = ["alpha beta", "gamma delta", "word " * 50, "epsilon"]
    one = tokens.count_tokens(texts[0]) + 1
    groups = tokens.batches(texts, 2 * one + 1, overhead=1)
    assert [p for g in groups for p in g] == [0, 1, 2, 3]
    assert groups[0] == [0, 1] and [2] in groups
    assert tokens.batches([], 10) == []


def test_batches_close_at_max_items_before_the_budget_is_full() -> None:
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert tokens.batches(texts, 1000, max_items=2) == [[0, 1], [2, 3], [4]]
    assert tokens.batches(texts, 1000, max_items=1) == [[0], [1], [2], [3], [4]]
    assert tokens.batches(texts, 1000) == [[0, 1, 2, 3, 4]], "0: the budget alone decides"
    one = tokens.count_tokens("alpha") + 1
    assert tokens.batches(texts, 2 * one, overhead=1, max_items=3)[0] == [0, 1], "budget first"
