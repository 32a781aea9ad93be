"""Round 10 of the ingest work (issue 15): the counter's compact vocabulary cache, the run
entries found by one regular expression, and the quicker checks of a batch give the same
counts, ceilings and answers as before (real tokenizer file, real cache folder)."""

from __future__ import annotations

import json
import marshal
import re
import shutil
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from octomem.engine.controls import ESCAPED_CATEGORIES, blank
from octomem.engine.token_counts import BatchCounts
from octomem.engine.types import Document
from octomem.plugins.fastembed import vocab_cache
from octomem.plugins.fastembed.bert_text import is_bert_wordpiece
from octomem.plugins.fastembed.ceiling_arrays import VocabularyKeys
from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.fastembed.minilm_tokenizer import tokenizer_dir
from octomem.plugins.fastembed.options import FastembedOptions
from octomem.plugins.fastembed.wordpiece_ceilings import shorter_words
from octomem.plugins.fastembed.wordpiece_count import WordPieceCounter

TOKENIZER = tokenizer_dir() / "tokenizer.json"
TEXTS = ["Purring lowers stress.", "“Quoted” — yes", "中文", "café au lait " * 40,
         "Photosynthesis rates in xqzvw mutants " * 30, "a [SEP] b", "\t\n", "x" * 300]


def _local_model(tmp_path: Path) -> Path:
    """A local model folder holding a copy of the bundled tokenizer file (no ONNX needed
    for counting)."""
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copyfile(TOKENIZER, folder / "tokenizer.json")
    return folder


def _counter(cache: Path) -> WordPieceCounter:
    counter = FastembedEmbedder(FastembedOptions(cache_dir=cache))._get_counter()
    assert counter is not None
    return counter


def _reference() -> WordPieceCounter:
    """The counter as before: from the parsed file, its run entries made when needed."""
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return WordPieceCounter(tokenizer, spec=json.loads(TOKENIZER.read_text(encoding="utf-8")))


def test_a_counter_read_from_the_cache_counts_and_bounds_as_one_from_the_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _reference()
    first = _counter(tmp_path)  # parses the JSON and writes the cache
    files = list((tmp_path / "tokenizers").iterdir())
    assert len(files) == 1 and files[0].name.endswith(".marshal")

    def no_json(_: str) -> None:
        raise AssertionError("tokenizer.json parsed although cached")

    monkeypatch.setattr(vocab_cache, "json", SimpleNamespace(loads=no_json))
    second = _counter(tmp_path)
    assert callable(second._shorter) and second._keys is not None  # read when first needed
    assert second.batch_ceilings(TEXTS, 0) == reference.batch_ceilings(TEXTS, 0)
    assert callable(second._shorter)  # the batch ceilings used the cached table alone
    built, cached = reference._arrays.keys, second._arrays.keys
    assert cached is second._keys and cached.probes == built.probes
    # the same keys (their slots among colliding ones may differ: the reference's entries
    # come from a set, in another order)
    def slots(keys: VocabularyKeys) -> list[tuple[int, int]]:
        return sorted(zip(keys.first.tolist(), keys.second.tolist(), strict=True))

    assert slots(cached) == slots(built)
    assert second._vocab == reference._vocab and second._longest == reference._longest
    assert second._added == reference._added and second._prefix == reference._prefix
    assert second._shorter_words() == first._shorter_words() == reference._shorter_words()
    for counter in (first, second):
        assert counter.count(TEXTS) == reference.count(TEXTS)
        assert counter.ceilings(TEXTS, 0) == reference.ceilings(TEXTS, 0)


@pytest.mark.parametrize("damage", [b"", b"not marshal", b"\xe3" * 40, "marshal-other"])
def test_a_damaged_cache_file_is_made_again(tmp_path: Path, damage: bytes | str) -> None:
    _counter(tmp_path)
    path = next((tmp_path / "tokenizers").iterdir())
    path.write_bytes(marshal.dumps((vocab_cache.FORMAT, {}, 1, 2, 3))
                     if damage == "marshal-other" else damage)
    assert vocab_cache._unpacked(path.read_bytes()) is None
    counter = _counter(tmp_path)
    assert counter.count(TEXTS) == _reference().count(TEXTS)
    assert vocab_cache._unpacked(path.read_bytes()) is not None  # written again


def test_a_cache_folder_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    counter = _counter(blocked)
    assert counter.count(TEXTS) == _reference().count(TEXTS)
    assert counter.ceilings(TEXTS, 0) == _reference().ceilings(TEXTS, 0)


def test_a_changed_tokenizer_file_gets_its_own_cache_file(tmp_path: Path) -> None:
    folder = _local_model(tmp_path)
    cache = tmp_path / "cache"
    embedder = FastembedEmbedder(FastembedOptions(model_path=folder, cache_dir=cache, dim=384))
    assert embedder.count_tokens(["zqxj"]) == [_reference().count(["zqxj"])[0]]
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    spec["model"]["vocab"]["zqxj"] = len(spec["model"]["vocab"])
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    again = FastembedEmbedder(FastembedOptions(model_path=folder, cache_dir=cache, dim=384))
    assert again.count_tokens(["zqxj"]) == [1]  # the new entry, not the old cache
    assert len(list((cache / "tokenizers").iterdir())) == 2


def test_a_vocabulary_with_a_newline_in_an_entry_round_trips(tmp_path: Path) -> None:
    spec = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    spec["model"]["vocab"] = {"ab\ncd": 0, "ef": 1, "[UNK]": 2, "##gh": 3}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    made = vocab_cache.counter_spec(path, is_bert_wordpiece, tmp_path)
    read = vocab_cache.counter_spec(path, is_bert_wordpiece, tmp_path)
    assert list(read.spec["model"]["vocab"]) == list(made.spec["model"]["vocab"])
    assert callable(read.shorter) and read.longest == 5  # "ab\ncd"
    assert made.shorter == read.shorter() == {b"ef": 1}  # "ab" and "cd" are no entries


def test_the_run_entries_are_those_a_folded_run_can_equal() -> None:
    vocab = ["the", "a", "##ing", "Cat", "café", "x1", "ab\ncd", "e-f", "naïve", "12", "[UNK]",
             "", "zz"]
    assert shorter_words(vocab) == {b"the": 2, b"x1": 1, b"12": 1, b"zz": 1}
    full = _reference()._vocab
    assert shorter_words(full) == {v.encode(): len(v) - 1 for v in full
                                   if re.fullmatch("[a-z0-9]{2,}", v)}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    ["a", "Z", "7", " ", "\t", "\n", "\u200b", "\u00ad", "\ufeff", "\u2028", "\u3000", "\u0301",
     "\x00", "\u00e9", "\u0660", "\u2167", "."]), max_size=6))
def test_blank_is_what_it_was(text: str) -> None:
    category = unicodedata.category
    assert blank(text) == all(c.isspace() or category(c) in ESCAPED_CATEGORIES for c in text)


def _sorted_as_before(counts: BatchCounts, docs: list[Document], budget: int,
                      bounds: list[int | None]) -> bool:
    """The general loop's answer for documents without titles."""
    return all(counts.fits(d) == (b is not None and b <= budget and bool(d.text)
                                  and not d.text.isspace())
               for d, b in zip(docs, bounds, strict=True))


def test_a_batch_without_titles_is_sorted_as_the_general_loop_sorts_it() -> None:
    counter = _reference()
    texts = [*TEXTS, "word " * 300, "   ", ""]
    docs = [Document(t, id=f"d{i}", title="" if i % 2 else None) for i, t in enumerate(texts)]
    counts = BatchCounts(counter.count, 254, lambda ts: counter.ceilings(ts, 254), docs)
    bounds = counter.ceilings(texts, 254)
    assert _sorted_as_before(counts, docs, 254, bounds)
    assert any(counts.fits(d) for d in docs) and not all(counts.fits(d) for d in docs)
    assert counts(texts) == counter.count(texts)


@pytest.mark.parametrize("part", ["keys", "run entries"])
def test_a_cache_file_with_damaged_tables_is_not_trusted(tmp_path: Path, part: str) -> None:
    _counter(tmp_path)
    path = next((tmp_path / "tokenizers").iterdir())
    found = list(marshal.loads(path.read_bytes()))
    if part == "keys":  # a table one slot short: not this layout
        probes, first, second = found[6]
        found[6] = (probes, first[:-8], second[:-8])
        path.write_bytes(marshal.dumps(tuple(found)))
        assert vocab_cache._unpacked(path.read_bytes()) is None
        assert _counter(tmp_path).batch_ceilings(TEXTS, 0) == _reference().batch_ceilings(
            TEXTS, 0)
        assert vocab_cache._unpacked(path.read_bytes()) is not None  # written again
    else:  # marshal bytes of something else than the entries' dict, or of nothing
        for damaged in (marshal.dumps([1, 2]), b"\xe3" * 9):
            found[5] = damaged
            path.write_bytes(marshal.dumps(tuple(found)))
            tables = vocab_cache._unpacked(path.read_bytes())
            assert tables is not None and callable(tables.shorter)
            assert tables.shorter() == _reference()._shorter_words()  # made again
