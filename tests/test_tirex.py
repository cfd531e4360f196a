"""TIREx inputs exactly as TIRA writes them.

TIRA's own `IrDatasetsLoader` writes documents.jsonl, queries.jsonl, queries.xml and rerank.jsonl.gz from real
ir_datasets Touché 2022 records (ir_datasets' own topic parser, its passage class) for a slice of the 2022
tira-input; each layout must give the topics and the run that topics.xml over the same passages gives.
"""

import gzip
import io
import json
from collections import Counter
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from ir_datasets.formats.touche import ToucheComparativeQueries, TouchePassageDoc
from lxml import etree
from tira.check_format import check_format
from tira.ir_datasets_loader import IrDatasetsLoader

from app.corpus import detect_corpus, read_documents
from app.errors import ToucheError
from app.pipeline import RunSettings, run
from app.runfile import validate_run
import app.topics
from app.topics import read_topics

DATASET_ID = "clueweb12/touche-2022-task-2"
TOPICS = ("2", "8", "12", "17", "19")  # dev topics
PASSAGES_PER_TOPIC = 20  # of each topic's judged passages in the tira-input


class _Bytes:
    """An ir_datasets source over bytes in memory: what its topic parsers stream from."""

    def __init__(self, data: bytes):
        self.data = data

    @contextmanager
    def stream(self):
        yield io.BytesIO(self.data)


class SliceDataset:
    """The part of an ir_datasets Dataset that IrDatasetsLoader reads, over a slice of real Touché 2022 records."""

    def __init__(self, queries, docs):
        self.queries, self.docs = queries, {doc.doc_id: doc for doc in docs}

    def dataset_id(self):
        return DATASET_ID

    def queries_iter(self):
        return iter(self.queries)

    def docs_iter(self):
        return iter(self.docs.values())

    def docs_store(self):
        return self

    def get_many_iter(self, doc_ids):
        return (self.docs[doc_id] for doc_id in doc_ids if doc_id in self.docs)


class SliceLoader(IrDatasetsLoader):
    """TIRA's loader, handed the slice instead of looking its id up in ir_datasets' registry."""

    def __init__(self, dataset: SliceDataset):
        self.dataset = dataset

    def load_irds(self, ir_datasets_id):
        return self.dataset


def write_touche_slice(task_dir, out):
    """The tira-input layout (topics.xml, passages.jsonl) for TOPICS and some of their judged passages."""
    judged = [line.split() for line in (task_dir / "touche-task2-2022-relevance-dev.qrels").read_text().splitlines()]
    with gzip.open(task_dir / "tira-input" / "passages.jsonl.gz", "rt", encoding="utf-8") as lines:
        passages = {json.loads(line)["id"]: line for line in lines}
    wanted, per_topic = set(), Counter()
    for qid, _, doc_id, _ in judged:
        if qid in TOPICS and doc_id in passages and per_topic[qid] < PASSAGES_PER_TOPIC:
            wanted.add(doc_id)
            per_topic[qid] += 1
    out.mkdir()
    (out / "passages.jsonl").write_text("".join(line for doc_id, line in passages.items() if doc_id in wanted))
    root = etree.parse(str(task_dir / "tira-input" / "topics.xml")).getroot()
    for topic in root.findall("topic"):
        if topic.findtext("number").strip() not in TOPICS:
            root.remove(topic)
    (out / "topics.xml").write_bytes(etree.tostring(root, encoding="utf-8"))
    return out


def slice_dataset(touche_dir) -> SliceDataset:
    """The slice as ir_datasets gives it: its Touché 2022 topic parser, its passage records."""
    queries = list(ToucheComparativeQueries(_Bytes((touche_dir / "topics.xml").read_bytes())).queries_iter())
    with (touche_dir / "passages.jsonl").open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    # The tira-input's passages lack ir_datasets' chatNoirUrl.
    docs = [TouchePassageDoc(record["id"], record["contents"], record.get("chatNoirUrl", "")) for record in records]
    return SliceDataset(queries, docs)


def write_plain_run(dataset: SliceDataset, path):
    """A run.txt to re-rank: each topic's passages in id order, decreasing scores."""
    lines = [f"{query.query_id} Q0 {doc_id} {rank} {100 - rank} plain"
             for query in dataset.queries for rank, doc_id in enumerate(sorted(dataset.docs), 1)]
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture
def inputs(shared_data, tmp_path):
    """The Touché layout and the TIREx layouts TIRA's loader writes from it: full-rank with queries.jsonl, with
    queries.xml, and re-rank."""
    touche = write_touche_slice(shared_data / "touche-2022-task2", tmp_path / "touche")
    dataset = slice_dataset(touche)
    loader = SliceLoader(dataset)
    fullrank = {}
    for kind, other in (("jsonl", "queries.xml"), ("xml", "queries.jsonl")):
        fullrank[kind] = tmp_path / f"tirex-{kind}"
        loader.load_dataset_for_fullrank(DATASET_ID, fullrank[kind], None, skip_qrels=True)
        (fullrank[kind] / other).unlink()
    # As TIREx makes a re-rank input from a run (tira.ir_datasets_loader.get_as_re_rank_input).
    rerank = loader.reformat_to_re_rank_dataset(write_plain_run(dataset, tmp_path / "run.txt"), tmp_path / "unused",
                                                tmp_path / "tirex-rerank", None, dataset)
    return SimpleNamespace(touche=touche, fullrank=fullrank, rerank=rerank, dataset=dataset)


@pytest.mark.parametrize("kind", ["jsonl", "xml"])
def test_tirex_full_rank_gives_the_topics_of_topics_xml(inputs, kind):
    expected = read_topics(inputs.touche)
    assert [topic.number for topic in expected] == list(TOPICS)
    assert all(topic.description and topic.narrative and topic.objects for topic in expected)
    assert expected[0].objects == ("laptop", "desktop")
    assert read_topics(inputs.fullrank[kind]) == expected


def test_a_tirex_title_of_a_control_character_reads_from_queries_jsonl(inputs, tmp_path, caplog):
    """TIRA's writer puts a title's form feed raw into queries.xml (BeautifulSoup's prettify), which no XML parser
    reads; read first, it ended the run, though queries.jsonl beside it holds the same topics, as TIRA reads them."""
    queries = [query._replace(title=query.title.replace(" ", "\x0c", 1)) for query in inputs.dataset.queries]
    SliceLoader(SliceDataset(queries, [])).load_dataset_for_fullrank(DATASET_ID, tmp_path / "in", None,
                                                                      skip_documents=True, skip_qrels=True)
    topics = read_topics(tmp_path / "in")
    assert [(topic.number, topic.title) for topic in topics] \
        == [(topic.number, topic.title) for topic in read_topics(inputs.touche)]
    assert "ignoring queries.xml" in caplog.text and "malformed XML" in caplog.text
    # the other way round: a queries.jsonl that no longer reads, beside a whole queries.xml (a review)
    SliceLoader(SliceDataset(inputs.dataset.queries, [])).load_dataset_for_fullrank(
        DATASET_ID, tmp_path / "cut", None, skip_documents=True, skip_qrels=True)
    (tmp_path / "cut" / "queries.jsonl").write_text("not JSON\n")
    caplog.clear()
    assert read_topics(tmp_path / "cut") == read_topics(inputs.touche)
    assert "reading the topics of queries.xml; ignoring queries.jsonl" in caplog.text
    real_read = app.topics._read_jsonl  # one that cannot be read at all (root reads what chmod forbids)

    def unreadable(path):
        raise PermissionError(13, "Permission denied", str(path))

    app.topics._read_jsonl = unreadable
    try:
        assert read_topics(tmp_path / "cut") == read_topics(inputs.touche)
    finally:
        app.topics._read_jsonl = real_read
    (tmp_path / "cut" / "queries.xml").write_text("<topics>")
    with pytest.raises(ToucheError, match=r"queries.jsonl:1: not a JSON object"):  # neither reads: the first's error
        read_topics(tmp_path / "cut")


def test_tirex_documents_are_the_passages(inputs):
    passages = list(read_documents(detect_corpus(inputs.touche)))
    assert len(passages) == len(inputs.dataset.docs) > 50
    assert list(read_documents(detect_corpus(inputs.fullrank["jsonl"]))) == passages


def test_tirex_rerank_alone_gives_every_field_of_the_original_query(inputs):
    assert [path.name for path in inputs.rerank.iterdir()] == ["rerank.jsonl.gz"]
    assert read_topics(inputs.rerank) == read_topics(inputs.touche)


def run_on(input_dir, output_dir, cache_dir):
    run(RunSettings(input_dir=input_dir, output_dir=output_dir, cache_dir=cache_dir, progress=False))
    return (output_dir / "run.txt").read_text()


@pytest.mark.slow
def test_tirex_full_rank_run_equals_the_topics_xml_run(inputs, tmp_path):
    expected = run_on(inputs.touche, tmp_path / "touche-run", tmp_path / "cache")
    for kind, input_dir in inputs.fullrank.items():
        assert run_on(input_dir, tmp_path / f"{kind}-run", tmp_path / "cache") == expected, kind


@pytest.mark.slow
def test_tirex_rerank_run_is_valid(inputs, tmp_path):
    out = tmp_path / "rerank-run"
    rows = [line.split() for line in run_on(inputs.rerank, out, tmp_path / "cache").splitlines()]
    assert check_format(out, "run.txt")[0].name == "OK"
    result = validate_run(out, "comparative")
    assert result.ok, result.errors
    assert {row[0] for row in rows} == set(TOPICS)
    assert {row[2] for row in rows} == set(inputs.dataset.docs)
    assert {row[1] for row in rows} - {"Q0"} <= {"FIRST", "SECOND", "NEUTRAL", "NO"}
