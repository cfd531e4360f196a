"""The stance stage (`app.labelling`): what the stance model is handed for each ranked document, and the labels."""

from app.settings import RunSettings


def test_no_stance_labels_no_document_and_loads_no_stance_model(monkeypatch, tmp_path):
    """--no-stance: every row Q0 (the run file writer's default for a topic without labels), no model loaded."""
    from app import stance
    from app.labelling import detect_stances
    from app.records import Topic

    def load(*args, **kwargs):
        raise AssertionError("a stance model was loaded")

    monkeypatch.setattr(stance.StanceModel, "load", load)
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path / "out", stance=False, progress=False)
    assert detect_stances([Topic("1", "Is a cat better than a dog?")], {"1": (["d"], [1.0])}, {"1": {"d": [0]}},
                          None, {}, "comparative", settings) == {}


def test_detect_stances_reads_stanceless_arguments_by_their_debates(monkeypatch, tmp_path):
    """args.me text without a stated stance (TIREx, BEIR, a passages file): the title all of a debate's arguments
    share, found among the topic's candidates (one below the rerank depth included), is not read for stance; where
    the ids number a debate's posts, their turns go to the model, and posts below the rerank depth too."""
    import numpy as np

    from app import stance
    from app.labelling import detect_stances
    from app.rerank import Encoded
    from app.records import Candidate, Document, StancePrediction, Topic

    seen = {}

    class Model:
        def predict(self, topic, texts, embeddings, task, query_embeddings=None, cross_depth=0, stated=None,
                    unread=(), turns=None, unread_turns=(), windows=None):
            seen.update(texts=texts, turns=turns, tail=unread_turns)
            return [StancePrediction("PRO", 1.0) for _ in texts] + [StancePrediction("CON", 1.0)
                                                                     for _ in unread_turns]

    monkeypatch.setattr(stance.StanceModel, "load", classmethod(lambda cls, **options: Model()))
    topic = Topic("3", "Is homework beneficial for children?")
    documents = [Document("S1-A1", "Homework should be banned It helps children learn."),
                 Document("S2-A1", "Homework should be banned It causes stress."),
                 Document("doc", "Homework should be banned Not args.me."),
                 Document("S2-A2", "Homework should be banned Below the rerank depth.")]
    candidates = {"3": [Candidate("3", document, 1.0) for document in documents]}
    encoded = Encoded(["S1-A1", "S2-A1", "doc"], [d.text for d in documents[:3]], np.zeros((3, 384), np.float32),
                      [d.text for d in documents[:3]])
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path, rerank_depth=3)
    ranked = {"3": (["S1-A1", "S2-A1", "doc", "S2-A2"], [4.0, 3.0, 2.0, 1.0])}
    best = {"3": {"S1-A1": [0], "S2-A1": [1], "doc": [2]}}
    detect_stances([topic], ranked, best, encoded, {"3": np.zeros((4, 384), np.float32)}, "controversial", settings,
                   candidates)
    assert seen["texts"] == ["Homework should be banned It helps children learn.", "It causes stress.",
                             "Homework should be banned Not args.me."]
    assert seen["turns"] == [None, None, None]  # args.me 2020-04-01 ids do not number a debate's posts
    assert seen["tail"] == []
    detect_stances([topic], ranked, best, encoded, {"3": np.zeros((4, 384), np.float32)}, "comparative", settings,
                   candidates)
    assert seen["texts"][1] == "Homework should be banned It causes stress."  # comparative topics read it whole
    # args.me 1.0 ids number a debate's posts: the head's turns go with the texts, and a post below the rerank
    # depth whose debate was read is labelled by it (one of another debate is not).
    debate = "7839a8e-2019-04-18T13:02:10Z"
    posts = [Document(f"{debate}-0000{i}-000", f"Homework should be banned {word}.")
             for i, word in enumerate(("Yes", "No", "Maybe"))]
    other = Document("51530f3f-2019-04-18T18:15:02Z-00000-000", "Another debate.")
    candidates = {"3": [Candidate("3", document, 1.0) for document in posts + [other]]}
    encoded = Encoded([d.doc_id for d in posts[:2]], [d.text for d in posts[:2]], np.zeros((2, 384), np.float32),
                      [d.text for d in posts[:2]])
    ranked = {"3": ([d.doc_id for d in posts + [other]], [4.0, 3.0, 2.0, 1.0])}
    best = {"3": {posts[0].doc_id: [0], posts[1].doc_id: [1]}}
    labels = detect_stances([topic], ranked, best, encoded, {"3": np.zeros((4, 384), np.float32)}, "controversial",
                            RunSettings(input_dir=tmp_path, output_dir=tmp_path, rerank_depth=2), candidates)
    assert seen["texts"] == ["Yes.", "No."]
    assert seen["turns"] == [(debate, 0), (debate, 1)] and seen["tail"] == [(debate, 2)]
    assert labels == {"3": ["PRO", "PRO", "CON", "Q0"]}


def test_detect_stances_hands_the_model_each_documents_stated_stance(monkeypatch, tmp_path):
    """The reranked head is read with its stated stances; below the rerank depth only a stated stance labels."""
    import numpy as np

    from app import stance
    from app.labelling import detect_stances
    from app.rerank import Encoded
    from app.records import Candidate, Document, StancePrediction, Topic

    seen = {}

    class Model:
        def predict(self, topic, texts, embeddings, task, query_embeddings=None, cross_depth=0, stated=None,
                    unread=(), turns=None, unread_turns=(), windows=None):
            seen.update(texts=texts, stated=stated, cross_depth=cross_depth, tail=unread, windows=windows)
            read = windows if windows is not None else texts  # one prediction a document
            return [StancePrediction("PRO", 1.0) for _ in read] + [StancePrediction(side, 1.0) for side, _ in unread]

    monkeypatch.setattr(stance.StanceModel, "load", classmethod(lambda cls, **options: Model()))
    topic = Topic("3", "Is homework beneficial for children?")
    documents = [Document("a", "Homework is not beneficial. Stress.", "PRO", "Homework is not beneficial"),
                 Document("b", "Homework helps."), Document("c", "Below the rerank depth.", "CON", "Homework"),
                 Document("d", "Below it, stating nothing.")]
    candidates = {"3": [Candidate("3", document, 1.0) for document in documents]}
    encoded = Encoded(["a", "b"], [d.text for d in documents[:2]], np.zeros((2, 384), np.float32),
                      [d.text for d in documents[:2]])
    settings = RunSettings(input_dir=tmp_path, output_dir=tmp_path, rerank_depth=2)
    ranked = {"3": (["b", "a", "d", "c"], [4.0, 3.0, 2.0, 1.0])}
    labels = detect_stances([topic], ranked, {"3": {"a": [0], "b": [1]}}, encoded,
                            {"3": np.zeros((4, 384), np.float32)},
                            "controversial", settings, candidates)
    assert seen["texts"] == ["Homework helps.", "Homework is not beneficial. Stress."]
    assert seen["stated"] == [None, ("PRO", "Homework is not beneficial")]
    assert seen["tail"] == [("CON", "Homework")] and seen["cross_depth"] == settings.stance_depth
    assert labels == {"3": ["PRO", "PRO", "Q0", "CON"]}
    seen.clear()
    head_only = RunSettings(input_dir=tmp_path, output_dir=tmp_path, rerank_depth=2, stance_model="head")
    detect_stances([topic], ranked, {"3": {"a": [0], "b": [1]}}, encoded, {"3": np.zeros((4, 384), np.float32)},
                   "controversial", head_only, candidates)
    assert seen["tail"] == [("CON", "Homework")] and seen["cross_depth"] == 0  # the tail is read as the head is
    seen.clear()
    labels = detect_stances([topic], ranked, {"3": {"a": [0], "b": [1]}}, encoded,
                            {"3": np.zeros((4, 384), np.float32)},
                            "comparative", settings, candidates)
    assert not seen["tail"] and not seen["stated"] and labels == {"3": ["PRO", "PRO", "Q0", "Q0"]}  # comparative:
    # no stated stances. A document of two passages is read by both together, best first (`StanceModel.predict`'s
    # `windows`), one label each.
    encoded = Encoded(["a", "b", "b2"], ["A.", "B best.", "B second."], np.zeros((3, 384), np.float32),
                      ["A.", "B", "B"])
    labels = detect_stances([topic], ranked, {"3": {"a": [0], "b": [1, 2]}}, encoded,
                            {"3": np.zeros((4, 384), np.float32)}, "comparative", settings, candidates)
    assert seen["texts"] == ["B best.", "B second.", "A."] and seen["windows"] == [2, 1]
    assert labels == {"3": ["PRO", "PRO", "Q0", "Q0"]}


def test_balance_stance_reorders_argumentative_topics_only():
    from app.labelling import balance

    ranked = {qid: (["a", "b", "c"], [3.0, 2.0, 1.0]) for qid in ("1", "2")}
    stances = {qid: ["PRO", "PRO", "CON"] for qid in ("1", "2")}
    balanced, labels = balance(ranked, stances, argumentative={"1"})
    assert balanced["1"] == (["a", "c", "b"], [3.0, 2.0, 1.0]) and labels["1"] == ["PRO", "CON", "PRO"]
    assert balanced["2"] == ranked["2"] and labels["2"] == stances["2"]


class _ReadingModel:
    """A stance model that notes the texts it is handed and calls each PRO."""

    def __init__(self, seen):
        self.seen = seen

    def predict(self, topic, texts, embeddings, task, query_embeddings=None, cross_depth=0, stated=None,
                unread=(), turns=None, unread_turns=(), windows=None):
        from app.records import StancePrediction

        self.seen.setdefault("texts", []).append(list(texts))
        return [StancePrediction("PRO", 1.0) for _ in (windows if windows is not None else texts)]


def test_a_topic_without_a_ranking_gets_no_labels_and_the_others_still_do(monkeypatch, tmp_path):
    """A topic whose first stage found nothing has no ranking (the pipeline's `ranked` holds the scored topics):
    the stance stage passes it over instead of failing the run."""
    import numpy as np

    from app import stance
    from app.labelling import detect_stances
    from app.rerank import Encoded
    from app.records import Topic

    monkeypatch.setattr(stance.StanceModel, "load", classmethod(lambda cls, **options: _ReadingModel({})))
    topics = [Topic("1", "Is homework good?"), Topic("2", "Should zoos be banned?")]
    encoded = Encoded(["a"], ["A text."], np.zeros((1, 384), np.float32), ["A text."])
    labels = detect_stances(topics, {"1": (["a"], [1.0])}, {"1": {"a": [0]}}, encoded,
                            {"1": np.zeros((1, 384), np.float32)}, "controversial",
                            RunSettings(input_dir=tmp_path, output_dir=tmp_path), {})
    assert labels == {"1": ["PRO"]}


def test_a_controversial_document_is_read_by_its_best_passage(monkeypatch, tmp_path):
    """`read_passages` lists a document's passages best first: on controversial topics the best alone is read."""
    import numpy as np

    from app import stance
    from app.labelling import detect_stances
    from app.rerank import Encoded
    from app.records import Topic

    seen = {}
    monkeypatch.setattr(stance.StanceModel, "load", classmethod(lambda cls, **options: _ReadingModel(seen)))
    texts = ["First window.", "Best window.", "Second best."]
    encoded = Encoded(["a", "a", "a"], texts, np.zeros((3, 384), np.float32), texts)
    labels = detect_stances([Topic("1", "Is homework good?")], {"1": (["a"], [1.0])}, {"1": {"a": [1, 2, 0]}},
                            encoded, {"1": np.zeros((1, 384), np.float32)}, "controversial",
                            RunSettings(input_dir=tmp_path, output_dir=tmp_path), {})
    assert seen["texts"] == [["Best window."]] and labels == {"1": ["PRO"]}
