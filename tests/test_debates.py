import pytest

from app.debates import debate_id, heard_from_turns, own_words, shared_words, stance_reading, turn
from app.records import Document, StancePrediction


def test_debate_id_reads_both_args_me_id_forms():
    assert debate_id("S21dc5a14-A8b896cb0") == "S21dc5a14"
    assert debate_id("7839a8e-2019-04-18T13:02:10Z-00001-000") == "7839a8e-2019-04-18T13:02:10Z"
    for other in ("clueweb12-0000tw-00-00000", "doc1", "S21dc5a14", "S21dc5a14-A8b896cb0-x", "Sxyz-A12"):
        assert debate_id(other) is None


def test_shared_words_finds_the_title_a_debate_opens_with():
    documents = [Document("S1-Aa", "Students should wear uniforms Schools should not force them."),
                 Document("S1-Ab", "Students should wear uniforms Uniforms make schools safer."),
                 Document("S2-Aa", "Students should wear uniforms They cost too much."),
                 Document("doc", "Students should wear uniforms Another corpus.")]
    shared = shared_words(documents)
    assert set(shared) == {"S1-Aa", "S1-Ab"}  # one argument of its debate (S2) or no debate (doc): nothing to tell
    assert shared["S1-Aa"] == (("Students", "should", "wear", "uniforms"), ())
    assert own_words(documents[0].text, shared["S1-Aa"]) == "Schools should not force them."


def test_shared_words_reads_only_the_debates_asked_for():
    """The stance stage asks for the debates of the head's arguments only: splitting every candidate's text, 5,000 a
    topic, took 37 of a stance stage's 39 s."""
    documents = [Document(f"S{debate}-A{post}", f"Title {debate} post {post}") for debate in (1, 2) for post in "ab"]
    assert set(shared_words(documents, {"S2"})) == {"S2-Aa", "S2-Ab"}
    assert set(shared_words(documents)) == {"S1-Aa", "S1-Ab", "S2-Aa", "S2-Ab"}
    assert shared_words(documents, set()) == {}


def test_shared_words_finds_the_title_a_debate_closes_with():
    # TIREx writes args.me as premises + " " + conclusion.
    documents = [Document("S1-Aa", "Cameras protect citizens. Police should wear body cameras"),
                 Document("S1-Ab", "Cameras invade privacy.\nPolice should wear body cameras"),
                 Document("S1-Ac", "Too expensive. Police should wear body cameras")]
    shared = shared_words(documents)
    assert shared["S1-Ab"] == ((), ("Police", "should", "wear", "body", "cameras"))
    assert own_words(documents[1].text, shared["S1-Ab"]) == "Cameras invade privacy."


def test_copies_of_one_text_share_nothing_to_strip():
    documents = [Document("S1-Aa", "Abortion Abortion is murder."), Document("S1-Ab", "Abortion Abortion is murder.")]
    assert shared_words(documents) == {}


def test_own_words_keeps_a_text_that_lacks_the_shared_words_or_would_be_empty():
    shared = (("Gay", "marriage"), ("Vote", "Pro!"))
    assert own_words("Marriage is a right. Vote Pro!", shared) == "Marriage is a right."
    assert own_words("A passage from the middle of a long post.", shared) == "A passage from the middle of a long post."
    assert own_words("Gay marriage", shared) == "Gay marriage"
    assert own_words("Gay marriage Vote Pro!", shared) == "Gay marriage Vote Pro!"
    assert own_words("anything", None) == "anything"


@pytest.mark.parametrize("cut", ["read", "unread"])
def test_a_text_cut_at_the_length_bound_does_not_hide_the_closing_title(cut):
    """Cut at the bound every stage reads, or at a candidate's below the rerank depth (`records.unread`)."""
    from app.records import MAX_TEXT_CHARS, MAX_UNREAD_TEXT_CHARS, bounded_text

    title = "Police should wear body cameras"
    long_text = bounded_text("word " * MAX_TEXT_CHARS + title)
    documents = [Document("S1-Aa", f"Cameras protect citizens. {title}"),
                 Document("S1-Ab", f"Too expensive. {title}"),
                 Document("S1-Ac", long_text if cut == "read" else long_text[:MAX_UNREAD_TEXT_CHARS])]
    shared = shared_words(documents)
    assert shared["S1-Aa"] == ((), tuple(title.split()))
    assert own_words(documents[0].text, shared["S1-Aa"]) == "Cameras protect citizens."


def test_turn_reads_the_post_number_of_args_me_1_ids_only():
    assert turn("7839a8e-2019-04-18T13:02:10Z-00003-000") == ("7839a8e-2019-04-18T13:02:10Z", 3)
    assert turn("S21dc5a14-A8b896cb0") is None and turn("doc") is None


def test_a_post_hears_the_other_read_posts_of_its_debate_turned_by_their_parity():
    turns = [("d", 0), ("d", 1), ("d", 2), None, ("e", 0), ("d", 4)]
    readings = [2.0, -1.0, None, 3.0, 1.0, None]
    heard = heard_from_turns(turns, readings, weight=0.5)
    # post 0 hears post 1 (odd, CON: so post 0 is PRO), post 1 hears post 0 turned, unread post 2 hears both
    assert heard == [0.5, -1.0, 1.5, None, None, 1.5]
    assert heard_from_turns([("d", 0)], [2.0]) == [None]


def test_stance_reading_reads_the_head_and_labels_below_it_what_states_or_turns():
    debate = "a1b2c3d4-2019-04-18T17:18:59Z"
    documents = [Document(f"{debate}-00001-000", "Zoos should be banned. Animals suffer."),
                 Document(f"{debate}-00002-000", "Zoos should be banned. Zoos protect species."),
                 Document("S1-A1", "Below the head, stating.", "CON", "Zoos are fine"),
                 Document(f"{debate}-00003-000", "Zoos should be banned. Below the head, a turn of a read debate."),
                 Document("other-2019-04-18T17:18:59Z-00001-000", "Below, a turn of a debate nobody read.")]
    by_id = {document.doc_id: document for document in documents}
    doc_ids = [document.doc_id for document in documents]
    head = doc_ids[:2]
    reading = stance_reading(doc_ids, head, [by_id[doc_id].text for doc_id in head], by_id, controversial=True)
    assert reading.texts == ["Animals suffer.", "Zoos protect species."]  # the debate's title left unread
    assert reading.stated == [None, None] and reading.turns == [(debate, 1), (debate, 2)]
    assert reading.unread == [("S1-A1", ("CON", "Zoos are fine"))]
    assert reading.unread_turns == [(doc_ids[3], (debate, 3))]
    predictions = [StancePrediction(label, 1.0) for label in ("PRO", "CON", "CON", "PRO")]
    assert reading.labels(doc_ids, predictions) == ["PRO", "CON", "CON", "PRO", "Q0"]
    comparative = stance_reading(doc_ids, head, ["a", "b"], by_id, controversial=False)
    assert (comparative.texts, comparative.unread, comparative.unread_turns) == (["a", "b"], [], [])


def test_a_stated_stance_keeps_its_text_whole_and_needs_the_statement_it_is_toward():
    """The title is left unread only where no stance is stated (it is the statement a stated stance is toward); a
    stance toward no statement is none to turn."""
    debate = "a1b2c3d4-2019-04-18T17:18:59Z"
    title = "Zoos should be banned"
    documents = [Document(f"{debate}-00001-000", f"{title}. Animals suffer.", "PRO", title),
                 Document(f"{debate}-00002-000", "Zoos should be banned. Zoos protect species."),
                 Document("S2-A1", "A stance toward nothing.", "PRO", None)]
    by_id = {document.doc_id: document for document in documents}
    doc_ids = list(by_id)
    reading = stance_reading(doc_ids, doc_ids, [document.text for document in documents], by_id, controversial=True)
    assert reading.texts == [f"{title}. Animals suffer.", "Zoos protect species.", "A stance toward nothing."]
    assert reading.stated == [("PRO", title), None, None]


def test_read_posts_beyond_the_first_two_are_turned_by_their_parity():
    """Posts 2 and 3 argue opposite sides, and so do 3 and 5 not: the tests read posts 0 and 1 only, where parity
    and number agree."""
    assert heard_from_turns([("d", 2), ("d", 3)], [1.0, 1.0], weight=0.5) == [-0.5, -0.5]
    assert heard_from_turns([("d", 3), ("d", 5)], [1.0, None], weight=0.5) == [None, 0.5]


def test_closing_words_that_overlap_the_opening_ones_are_not_stripped_over_them():
    """A short text whose shared opening and closing overlap: the opening goes, the rest stays."""
    assert own_words("A B C", (("A", "B"), ("B", "C"))) == "C"
