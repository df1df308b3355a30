"""The offline Qwen2.5 tokenizer."""

from __future__ import annotations

from graphrag import tokens


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
