"""Loading a corpus with clear errors, and token chunking with overlap and stable ids."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO_DOCS

from graphrag import schemas as S
from graphrag.text import tokens
from graphrag.text.documents import DocumentError, chunk_documents, load_documents


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- loading


def test_demo_corpus_loads_twelve_documents() -> None:
    documents = load_documents(DEMO_DOCS).documents
    assert len(documents) == 12
    assert list(documents.columns) == [S.ID, S.HUMAN_ID, S.TITLE, S.TEXT, S.SOURCE]
    assert documents[S.ID].tolist() == sorted(p.stem for p in DEMO_DOCS.glob("*.md"))
    assert documents[S.HUMAN_ID].tolist() == list(range(12))
    first = documents.iloc[0]
    assert first[S.ID] == "01_kbmi_profile"
    assert first[S.TITLE] == "Kestrel Bay Marine Institute: Who We Are"
    assert first[S.TEXT] == (DEMO_DOCS / "01_kbmi_profile.md").read_text(encoding="utf-8")
    assert first[S.SOURCE] == str(DEMO_DOCS / "01_kbmi_profile.md")


def test_folder_ids_are_relative_paths_and_titles_come_from_headings(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "b.md", "# The B Report\n\nBody of b.")
    write(corpus / "a.txt", "No heading here.\n# Not a title, not on the first line")
    write(corpus / "sub" / "deep" / "c.md", "\n\n## Second-level heading\ntext")
    write(corpus / "ignored.csv", "x,y\n1,2")
    write(corpus / "d.MD", "# Upper-case suffix\nstill loaded")
    documents = load_documents(corpus).documents.set_index(S.ID)
    assert sorted(documents.index) == ["a", "b", "d", "sub/deep/c"]
    assert documents.loc["b", S.TITLE] == "The B Report"
    assert documents.loc["a", S.TITLE] == "a"  # falls back to the file stem
    assert documents.loc["sub/deep/c", S.TITLE] == "Second-level heading"
    assert documents.loc["d", S.TITLE] == "Upper-case suffix"


def test_single_file_and_utf8_bom(tmp_path: Path) -> None:
    path = write(tmp_path / "only.md", "\ufeff# Bom Title\ntext".encode())
    documents = load_documents(path).documents
    assert documents[S.ID].tolist() == ["only"]
    assert documents[S.TEXT].iloc[0] == "# Bom Title\ntext"
    assert documents[S.TITLE].iloc[0] == "Bom Title"


def test_jsonl_documents(tmp_path: Path) -> None:
    lines = [
        {"id": "x1", "title": "First", "text": "Alpha text."},
        {"text": "Beta text without id or title."},
        {"id": "a0", "text": "Gamma."},
    ]
    path = write(tmp_path / "docs.jsonl", "\n".join(map(json.dumps, lines)) + "\n\n")
    documents = load_documents(path).documents.set_index(S.ID)
    assert sorted(documents.index) == ["a0", "docs-2", "x1"]
    assert documents.loc["x1", S.TITLE] == "First"
    assert documents.loc["docs-2", S.TITLE] == "docs-2"
    assert documents.loc["docs-2", S.TEXT] == "Beta text without id or title."
    assert documents.loc["a0", S.SOURCE] == f"{path}:3"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.md", "  \n\t\n", "the document is empty"),
        ("binary.txt", b"PK\x03\x04\x00\x00binary", "looks binary"),
        ("latin1.md", "caf\xe9 cr\xe8me".encode("latin-1"), "not valid UTF-8 (byte 3)"),
    ],
)
def test_bad_files_are_named(tmp_path: Path, name: str, content, message: str) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "good.md", "# Good\nfine")
    bad = write(corpus / name, content)
    with pytest.raises(DocumentError) as info:
        load_documents(corpus)
    assert str(bad) in str(info.value)
    assert message in str(info.value)


def test_oversized_document_names_the_file_and_the_setting(tmp_path: Path) -> None:
    path = write(tmp_path / "long.md", " ".join(["word"] * 50))
    with pytest.raises(DocumentError, match=r"long\.md: the document has 50 tokens") as info:
        load_documents(path, max_tokens=20)
    assert "chunking.max_document_tokens=20" in str(info.value)
    assert len(load_documents(path, max_tokens=50).documents) == 1


def test_skip_bad_reports_skipped_files(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "good.md", "# Good\nfine")
    write(corpus / "empty.txt", "")
    write(corpus / "binary.md", b"\x00\x01\x02")
    report = load_documents(corpus, skip_bad=True)
    assert report.documents[S.ID].tolist() == ["good"]
    skipped = dict(report.skipped)
    assert set(skipped) == {str(corpus / "empty.txt"), str(corpus / "binary.md")}
    assert "empty" in skipped[str(corpus / "empty.txt")]
    assert "binary" in skipped[str(corpus / "binary.md")]


def test_nothing_usable_is_an_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus / "notes.csv", "a,b")
    with pytest.raises(DocumentError, match="no usable documents"):
        load_documents(corpus)
    with pytest.raises(DocumentError, match="no such file or folder"):
        load_documents(tmp_path / "missing")
    write(corpus / "empty.md", "")
    with pytest.raises(DocumentError, match="no usable documents"):
        load_documents(corpus, skip_bad=True)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "b", "text": "unterminated', "not valid JSON"),
        ('["not", "an", "object"]', "expected an object with a string 'text'"),
        ('{"id": "b", "text": 42}', "expected an object with a string 'text'"),
        ('{"id": "b", "text": "   "}', "the document is empty"),
        ('{"id": "a", "text": "again"}', "duplicate document id 'a'"),
    ],
)
def test_bad_jsonl_line_names_path_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "docs.jsonl", '{"id": "a", "text": "fine"}\n\n' + line + "\n")
    with pytest.raises(DocumentError) as info:
        load_documents(path)
    assert f"{path}:3" in str(info.value)
    assert message in str(info.value)

    report = load_documents(path, skip_bad=True)
    assert report.documents[S.ID].tolist() == ["a"]
    assert [where for where, _ in report.skipped] == [f"{path}:3"]


# --------------------------------------------------------------------------- chunking


@pytest.mark.parametrize(("size", "overlap"), [(120, 30), (200, 1), (64, 63)])
def test_chunks_are_token_windows_with_overlap(size: int, overlap: int) -> None:
    documents = load_documents(DEMO_DOCS).documents
    units = chunk_documents(documents, size, overlap)
    assert list(units.columns) == [
        S.ID,
        S.HUMAN_ID,
        S.TEXT,
        S.N_TOKENS,
        S.DOCUMENT_IDS,
        S.START_TOKEN,
    ]
    assert units[S.HUMAN_ID].tolist() == list(range(len(units)))
    assert units[S.ID].is_unique
    for doc in documents.itertuples(index=False):
        ids = tokens.encode(doc.text)
        chunks = units[units[S.DOCUMENT_IDS].map(lambda d, i=doc.id: d == [i])]
        starts = chunks[S.START_TOKEN].tolist()
        assert starts == list(range(0, starts[-1] + 1, size - overlap))
        counts = chunks[S.N_TOKENS].tolist()
        assert all(n == size for n in counts[:-1])
        assert starts[-1] + counts[-1] == len(ids)  # the last chunk ends the document
        assert 0 < counts[-1] <= size
        pieces = [tokens.encode(t) for t in chunks[S.TEXT]]
        assert [len(p) for p in pieces] == counts
        for start, piece in zip(starts, pieces, strict=True):
            assert piece == ids[start : start + len(piece)]
        for before, after in zip(pieces, pieces[1:], strict=False):
            assert before[-overlap:] == after[:overlap]
            assert before[-overlap - 1 :] != after[: overlap + 1]  # exactly overlap shared


def test_last_chunk_is_shorter() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    assert tokens.count_tokens(text) > 100
    documents = pd.DataFrame({S.ID: ["d"], S.TEXT: [text]})
    units = chunk_documents(documents, size=60, overlap=10)
    n = tokens.count_tokens(text)
    expected = list(range(0, n - 10, 50))
    assert units[S.START_TOKEN].tolist() == expected
    assert units[S.N_TOKENS].tolist()[:-1] == [60] * (len(expected) - 1)
    assert units[S.N_TOKENS].iloc[-1] == n - expected[-1] < 60
    pieces = [tokens.encode(t) for t in units[S.TEXT]]
    rebuilt = [i for piece in pieces[:-1] for i in piece[:50]] + pieces[-1]
    assert tokens.decode(rebuilt) == text


def test_a_short_document_is_one_chunk() -> None:
    documents = pd.DataFrame({S.ID: ["d"], S.TEXT: ["A short note."]})
    units = chunk_documents(documents, size=600, overlap=100)
    assert units[S.TEXT].tolist() == ["A short note."]
    assert units[S.N_TOKENS].tolist() == [tokens.count_tokens("A short note.")]


def test_overlap_must_be_smaller_than_size() -> None:
    documents = pd.DataFrame({S.ID: ["d"], S.TEXT: ["text"]})
    with pytest.raises(ValueError, match="chunking.overlap"):
        chunk_documents(documents, size=50, overlap=50)


def test_chunk_ids_are_stable_and_change_only_where_the_text_changed() -> None:
    documents = load_documents(DEMO_DOCS).documents
    first = chunk_documents(documents, 100, 20)
    again = chunk_documents(load_documents(DEMO_DOCS).documents, 100, 20)
    assert first[S.ID].tolist() == again[S.ID].tolist()

    edited = documents.copy()
    row = edited.index[edited[S.ID] == "03_storm_corvin"][0]
    original = edited.at[row, S.TEXT]
    edited.at[row, S.TEXT] = original.rstrip() + " A late correction was added."
    changed = chunk_documents(edited, 100, 20)

    def by_doc(frame: pd.DataFrame, doc: str) -> list[str]:
        return frame[frame[S.DOCUMENT_IDS].map(lambda d: d == [doc])][S.ID].tolist()

    for doc in documents[S.ID]:
        if doc != "03_storm_corvin":
            assert by_doc(changed, doc) == by_doc(first, doc)
    old_ids, new_ids = by_doc(first, "03_storm_corvin"), by_doc(changed, "03_storm_corvin")
    edit_at = len(tokens.encode(original.rstrip()))
    old_units = first[first[S.ID].isin(old_ids)]
    untouched = old_units[old_units[S.START_TOKEN] + old_units[S.N_TOKENS] < edit_at]
    assert len(untouched) >= 2
    assert new_ids[: len(untouched)] == untouched[S.ID].tolist()
    assert set(new_ids[len(untouched) :]).isdisjoint(old_ids)


def test_same_text_in_another_document_gets_another_id() -> None:
    documents = pd.DataFrame({S.ID: ["a", "b"], S.TEXT: ["Same words.", "Same words."]})
    units = chunk_documents(documents)
    assert units[S.ID].nunique() == 2


@pytest.mark.parametrize("skip_bad", [False, True])
def test_two_files_with_one_id_are_named(tmp_path: Path, skip_bad: bool) -> None:
    (tmp_path / "a.md").write_text("# A\nThe markdown one.")
    (tmp_path / "a.txt").write_text("The text one.")
    (tmp_path / "b.txt").write_text("Another.")
    with pytest.raises(DocumentError, match=r"a\.md and .*a\.txt would both be document 'a'"):
        load_documents(tmp_path, skip_bad=skip_bad)
