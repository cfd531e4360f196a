from app.lexical import LexicalIndex

TEXTS = ["Cats are independent pets that need no walks.",
         "Dogs need daily walks and lots of attention.",
         "The train station is in the city centre.",
         "Walking the dog every day keeps owners healthy."]


def test_bm25_ranks_matching_texts_first_and_stems():
    index = LexicalIndex.build(TEXTS, size=len(TEXTS))
    (rows, scores), = index.search(["walking dogs"], k=10)
    assert set(rows[:2]) == {1, 3}  # "walks"/"walking" and "dogs"/"dog" share stems
    assert list(scores) == sorted(scores, reverse=True) and (scores > 0).all()
    assert 2 not in rows  # no shared term: not retrieved


def test_k_is_capped_and_unknown_or_stopword_queries_return_nothing():
    index = LexicalIndex.build(TEXTS)
    results = index.search(["cats", "zebra", "the and of"], k=100)
    assert list(results[0][0]) == [0]
    assert len(results[1][0]) == 0 and len(results[2][0]) == 0
