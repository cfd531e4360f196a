"""The first stage (app/retrieval.py): candidates from a re-rank file, BM25 over a local corpus, or ChatNoir."""

import pytest

from app.errors import ToucheError
from app.pipeline import DEMO_INPUT
from app.retrieval import first_stage
from app.settings import RunSettings
from app.topics import read_topics


def test_a_corpus_defect_is_said_once_a_run_cached_index_or_not(fixtures, tmp_path, caplog):
    """The index's pass says the corpus's defects; the pass that keeps the candidates' texts says them only where
    a cached index had no such pass (twice on a first run, never on a later one, were it the other way round)."""
    import shutil

    shutil.copytree(fixtures / "passages", tmp_path / "in")  # with a bad line, a duplicate id, an empty text
    settings = RunSettings(input_dir=tmp_path / "in", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           progress=False)
    for _ in ("index built", "index cached"):
        caplog.clear()
        first_stage(settings, read_topics(tmp_path / "in"))
        assert caplog.text.count("passages.jsonl: skipped 3 records") == 1


def test_the_first_stage_called_alone_without_a_cache_directory_says_so(fixtures, tmp_path):
    """`pipeline.run` gives a run without a cache directory a temporary one; the stage called alone on the default
    settings ended in "unsupported operand type(s) for /: 'NoneType' and 'str'"."""
    settings = RunSettings(input_dir=fixtures / "passages", output_dir=tmp_path / "out", progress=False)
    with pytest.raises(ValueError, match="needs settings.cache_dir"):
        first_stage(settings, read_topics(fixtures / "passages"))


def test_a_rerank_file_gives_each_topic_its_first_candidates_at_most(fixtures, tmp_path):
    """--candidates cuts a re-rank file's candidates too, whatever --depth."""
    settings = RunSettings(input_dir=fixtures / "rerank", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           candidates=2, depth=1000, progress=False)
    found = first_stage(settings, read_topics(fixtures / "rerank"))
    assert {qid: [candidate.doc.doc_id for candidate in candidates] for qid, candidates in found.candidates.items()} \
        == {"11": ["p-cat-1", "p-cat-2"], "12": ["p-train-1", "p-train-2"], "13": ["p-tea-1", "p-tea-2"]}


def test_a_rerank_file_of_other_topics_is_an_error_before_any_encoding(fixtures, tmp_path):
    import shutil

    shutil.copy(fixtures / "rerank" / "rerank.jsonl", tmp_path)
    (tmp_path / "topics.xml").write_text("<topics><topic><number>99</number><title>Tea or coffee?</title></topic>"
                                         "</topics>")
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", progress=False)
    with pytest.raises(ToucheError, match=r"holds none of the 1 topics' numbers \(its queries: 11, 12, 13\)"):
        first_stage(settings, read_topics(tmp_path))


def test_the_candidates_of_queries_that_are_no_topic_are_said_before_the_work(fixtures, tmp_path, caplog):
    import shutil

    shutil.copy(fixtures / "rerank" / "rerank.jsonl", tmp_path)
    (tmp_path / "topics.xml").write_text("<topics><topic><number>11</number><title>Tea or coffee?</title></topic>"
                                         "<topic><number>012</number><title>Cats or dogs?</title></topic></topics>")
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           progress=False)
    candidates = first_stage(settings, read_topics(tmp_path)).candidates
    assert set(candidates) == {"11"}
    assert "ignoring the candidates of 2 queries that are no topic (12, 13)" in caplog.text


def test_chatnoir_settings_on_a_local_corpus_are_said_to_be_ignored(fixtures, caplog):
    """--page-text full on a passages file changed nothing, unsaid."""
    from app.retrieval import candidate_source

    candidate_source(RunSettings(input_dir=fixtures / "rerank", output_dir=fixtures / "out", page_text="full",
                                 index="cw22", progress=False))
    assert "rerank.jsonl: --page-text full reads ChatNoir's pages and is ignored" in caplog.text
    assert "rerank.jsonl: --index cw22 names a ChatNoir index and is ignored" in caplog.text


def test_a_corpus_replaced_while_the_run_reads_it_is_an_error_and_never_cached(fixtures, tmp_path, monkeypatch):
    """Replaced between its fingerprint and its reading, its index was kept under the old corpus's key: later runs
    on the old corpus ranked the new one's texts (or failed on an id it lacks, a KeyError), without a word."""
    import shutil

    from app import retrieval

    shutil.copytree(fixtures / "passages", tmp_path / "in")
    corpus = tmp_path / "in" / "passages.jsonl"
    settings = RunSettings(input_dir=tmp_path / "in", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           progress=False)
    topics = read_topics(settings.input_dir)
    expected = first_stage(settings, topics).candidates
    shutil.rmtree(tmp_path / "cache")
    read, original = retrieval.read_documents, corpus.read_bytes()

    def replaced_once_read(source, **options):
        yield from read(source, **options)
        corpus.write_bytes(original.replace(b'"contents": "', b'"contents": "replaced '))  # another version, same ids

    monkeypatch.setattr(retrieval, "read_documents", replaced_once_read)
    with pytest.raises(ToucheError, match=r"^passages.jsonl changed while the run read it \(replaced or written to\)"):
        first_stage(settings, topics)
    monkeypatch.undo()
    corpus.write_bytes(original)
    assert first_stage(settings, topics).candidates == expected  # nothing of the other version was kept


def test_chatnoir_texts_are_fetched_for_the_reranked_head(tmp_path, monkeypatch):
    """Pages below --rerank-depth follow in ChatNoir's order and are never read: their texts are not fetched."""
    from app import retrieval

    asked = {}

    class Backend:
        def __init__(self, settings):
            pass

        def retrieve(self, topics, depth, text_depth=None):
            asked.update(depth=depth, text_depth=text_depth)
            return {topic.number: [] for topic in topics}

    monkeypatch.setattr(retrieval, "ChatNoirBackend", Backend)
    monkeypatch.setenv("CHATNOIR_API_KEY", "key")
    (tmp_path / "in").mkdir()
    settings = RunSettings(input_dir=tmp_path / "in", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           backend="chatnoir", candidates=300, rerank_depth=200)
    first_stage(settings, read_topics(DEMO_INPUT))
    assert asked == {"depth": 300, "text_depth": 200}


def test_a_local_document_is_ranked_and_read_by_an_argument_past_20000_characters(tmp_path):
    """A local corpus's documents were cut at 20,000 characters and ranked whole: an argument after ~3,300 words of
    a page was neither found nor read. It is read up to 100,000 characters and ranked by its best passage."""
    import json

    filler = " ".join(f"Sentence {i} is about the weather in another town." for i in range(3_000))  # 150,000 chars
    argument = "Nuclear energy is cleaner than coal: nuclear plants emit almost no carbon dioxide."
    documents = [{"id": "page", "text": f"{filler[:30_000]} {argument} {filler[:20_000]}"}]
    documents += [{"id": f"other-{i}", "text": f"Coal mining employs {i} people. {filler[:300]}"} for i in range(20)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents))
    (tmp_path / "in" / "topics.xml").write_text("<topics><topic><number>1</number><title>Is nuclear energy better "
                                               "than coal?</title></topic></topics>")
    settings = RunSettings(input_dir=tmp_path / "in", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           progress=False)
    for _ in ("index built", "index cached"):
        best = first_stage(settings, read_topics(tmp_path / "in")).candidates["1"][0]
        assert best.doc.doc_id == "page" and argument in best.doc.text


@pytest.mark.parametrize("layout", ["documents.jsonl", "rerank.jsonl"])
def test_candidates_below_the_rerank_depth_keep_the_text_of_the_old_bound(layout, tmp_path):
    """Only the top --rerank-depth are read; the others are held too, up to --candidates a topic: at 100,000
    characters, 5 topics' 1,000 took twice the memory."""
    import json

    from app.records import MAX_UNREAD_TEXT_CHARS

    pages = [" ".join(f"Coal plant {i} burns {j} tonnes a day." for j in range(1_300)) for i in range(3)]
    (tmp_path / "in").mkdir()
    lines = ([{"qid": "1", "query": "coal plants", "docno": f"page-{i}", "text": text, "rank": i + 1, "score": 3 - i}
              for i, text in enumerate(pages)] if layout == "rerank.jsonl"
             else [{"id": f"page-{i}", "text": text} for i, text in enumerate(pages)])
    (tmp_path / "in" / layout).write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "in" / "topics.xml").write_text("<topics><topic><number>1</number><title>Are coal plants "
                                               "harmful?</title></topic></topics>")
    settings = RunSettings(input_dir=tmp_path / "in", output_dir=tmp_path / "out", cache_dir=tmp_path / "cache",
                           rerank_depth=1, progress=False)
    found = first_stage(settings, read_topics(tmp_path / "in")).candidates["1"]
    assert len(found) == 3 and found[0].doc.text in pages and len(found[0].doc.text) > 2 * MAX_UNREAD_TEXT_CHARS
    assert [len(candidate.doc.text) for candidate in found[1:]] == [MAX_UNREAD_TEXT_CHARS] * 2
    assert all(candidate.doc.text == pages[int(candidate.doc.doc_id[-1])][:MAX_UNREAD_TEXT_CHARS]
               for candidate in found[1:])
