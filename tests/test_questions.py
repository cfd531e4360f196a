"""Question understanding: the paper's rule baseline, object spans, file reading and the shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.errors import ToucheError
from app.questions import (SETTINGS_FILE, QuestionAnalysis, RuleClassifier, closing_comparison, format_line,
                           given_questions, load_classifier, objects_from_tags, read_questions, rule_type, tokenize)
from app.settings import MODELS_DIR


@pytest.mark.parametrize("question, expected", [
    ("Which countries legalized marijuana?", "factual"),
    ("Why are people in favor of legalizing marijuana?", "argumentative"),
    ("How to hold a referendum on legalizing marijuana?", "method"),
    ("How much does a referendum cost?", "method"),  # the baseline's rule: every how-question is method
    ("Should marijuana be legalized?", "argumentative"),
    ("Will legalizing marijuana reduce crime?", "argumentative"),
    ("who won the 2014 world cup", "factual"),
    ("", "argumentative"),
])
def test_rule_type_follows_the_paper(question, expected):
    assert rule_type(question) == expected


def test_tokenize_splits_like_the_training_data():
    assert [t.text for t in tokenize("What's better: C++ or C#?")] == ["What", "s", "better", "C++", "or", "C#"]


@pytest.mark.parametrize("question, objects", [
    ("Which is better, Canon or Nikon?", ("Canon", "Nikon")),
    ("Why is Linux better than Windows?", ("Linux", "Windows")),
    ("Is pasta healthier than pizza?", ("pasta", "pizza")),
    ("Should I buy steel or ceramic knives?", ("steel knives", "ceramic knives")),
    ("What is the difference between a vegan and a vegetarian?", ("vegan", "vegetarian")),
    ("Which is better at reducing fever in children, Ibuprofen or Aspirin?", ("Ibuprofen", "Aspirin")),
    ("Is OpenGL better than Direct3D in terms of portability?", ("OpenGL", "Direct3D")),
])
def test_rule_objects_around_the_comparison(question, objects):
    assert RuleClassifier().extract_objects(question)[0] == objects


def test_tagged_objects_are_cut_at_punctuation_and_keep_spelling():
    question = "What is better for the environment, a real or a fake Christmas tree?"
    tokens = tokenize(question)
    tags = ["O", "O", "PRED", "O", "O", "OBJ", "OBJ", "OBJ", "O", "O", "OBJ", "OBJ", "OBJ"]
    objects, aspect = objects_from_tags(question, tokens, tags)
    assert objects == ("real Christmas tree", "fake Christmas tree")
    assert aspect is None
    tags[4:6] = ["ASP", "ASP"]
    assert objects_from_tags(question, tokens, tags)[1] == "the environment"


def test_rules_classifier_analysis_and_json():
    a = RuleClassifier().analyze("Which is better, a laptop or a desktop?")
    assert (a.type, a.comparative, a.objects) == ("factual", True, ("laptop", "desktop"))
    doc = a.to_json()
    assert {"question", "type", "comparative", "objects", "confidence", "aspect"} <= doc.keys()
    assert json.loads(json.dumps(doc))["objects"] == ["laptop", "desktop"]
    assert not RuleClassifier().analyze("Should marijuana be legalized?").comparative


def test_questions_are_cleaned_as_a_run_reads_titles(tmp_path):
    """An escape sequence in a question reached the terminal as it came (a title bar set to "pwned")."""
    (tmp_path / "q.txt").write_text("Is tea\x1b]0;pwned\x07 better than coffee?\nTea\u00a0or  coffee?\n")
    assert given_questions(["Cafe\u0301 or tea?"], tmp_path / "q.txt") == [
        "Caf\u00e9 or tea?", "Is tea better than coffee?", "Tea or coffee?"]  # the sequence goes whole
    with pytest.raises(ToucheError, match="empty question"):
        given_questions(["\x1b\x07"], None)
    (tmp_path / "none.txt").write_text("\n\n")  # was "pass them as arguments or with --file", given --file
    with pytest.raises(ToucheError, match=r"none.txt: no questions in it$"):
        given_questions([], tmp_path / "none.txt")


def test_format_line_shows_type_objects_and_question():
    line = format_line(QuestionAnalysis("Cats or dogs?", "argumentative", 0.8, True, ("cats", "dogs"), "pets"))
    assert line.startswith("argumentative 0.80")
    assert "cats | dogs" in line and "aspect: pets" in line and line.endswith("Cats or dogs?")
    assert "not comparative" in format_line(QuestionAnalysis("Is golf a sport?", "argumentative", 1.0, False))
    assert "\n" not in format_line(QuestionAnalysis("Which is better,\nPython or Java?", "factual", 1.0, False))


def test_read_questions_from_lines_and_topics_xml(fixtures):
    assert read_questions(fixtures / "questions" / "questions.txt") == [
        "Should marijuana be legalized?", "Which countries legalized marijuana?",
        "How to hold a referendum on legalizing marijuana?"]
    assert read_questions(fixtures / "questions" / "topics.xml") == [
        "Which is better, a laptop or a desktop?", "Should recreational marijuana be legal?"]


def test_read_questions_reads_a_topics_xml_with_a_bom_and_markup_in_a_title(tmp_path):
    (tmp_path / "topics.xml").write_bytes(b"\xef\xbb\xbf<topics><topic><number>1</number><title>Is <i>golf</i> a "
                                          b"sport?</title></topic></topics>")
    assert read_questions(tmp_path / "topics.xml") == ["Is golf a sport?"]


def test_read_questions_reads_a_queries_jsonl_as_touche_run_does(tmp_path):
    """TIREx's queries.jsonl: each JSON line was read as a question."""
    (tmp_path / "queries.jsonl").write_text('{"qid": "2", "query": "laptop or desktop?", "original_query": '
                                            '{"title": "Which is better, a laptop or a desktop?"}}\n')
    assert read_questions(tmp_path / "queries.jsonl") == ["Which is better, a laptop or a desktop?"]
    (tmp_path / "queries.jsonl").rename(tmp_path / "Q.JSONL")  # was "malformed XML"
    assert read_questions(tmp_path / "Q.JSONL") == ["Which is better, a laptop or a desktop?"]


def test_read_questions_reads_each_topics_title_of_a_queries_xml_as_touche_run_does(tmp_path):
    """TIREx's queries.xml: a topic of <query> alone was "has no <title> elements", one with its own <title> and
    its <original_query>'s was two questions."""
    (tmp_path / "queries.xml").write_text(
        "<topics><topic><qid>1</qid><query>Is coffee better than tea?</query></topic>"
        "<topic><number>2</number><title>Mac or PC?</title><original_query><title>Mac or PC?</title>"
        "</original_query></topic></topics>")
    assert read_questions(tmp_path / "queries.xml") == ["Is coffee better than tea?", "Mac or PC?"]


def test_read_questions_reads_utf16_as_touche_run_does(tmp_path):
    """A Windows editor's "Unicode": UTF-16 with a BOM, a topics.xml that `touche run` reads, or plain lines."""
    (tmp_path / "topics.xml").write_text("<?xml version='1.0' encoding='UTF-16'?><topics><topic><number>1</number>"
                                         "<title>Is tea better than coffee?</title></topic></topics>",
                                         encoding="utf-16")
    (tmp_path / "questions.txt").write_text("Is tea good?\nIs coffee good?\n", encoding="utf-16")
    assert read_questions(tmp_path / "topics.xml") == ["Is tea better than coffee?"]
    assert read_questions(tmp_path / "questions.txt") == ["Is tea good?", "Is coffee good?"]


def test_an_endless_questions_file_is_an_error_not_all_the_memory(monkeypatch):
    """`--file /dev/zero` (a runaway producer on /dev/stdin) took 23 GB before the kernel killed it."""
    import app.questions as questions

    monkeypatch.setattr(questions, "MAX_QUESTIONS_BYTES", 1 << 20)
    with pytest.raises(ToucheError, match="/dev/zero: more than 1 MB of questions"):
        read_questions(Path("/dev/zero"))


def test_read_questions_reads_lines_that_open_with_a_less_than_sign_as_questions(tmp_path):
    """A question file whose first line was "<3 Which is better, ..." was read as XML: "malformed XML"."""
    (tmp_path / "q.txt").write_text("<b>Is tea good?</b>\nIs coffee good?\n", encoding="utf-8")
    (tmp_path / "q").write_text("<3 Which is better, Python or Java?\n", encoding="utf-8")
    assert read_questions(tmp_path / "q.txt") == ["<b>Is tea good?</b>", "Is coffee good?"]
    assert read_questions(tmp_path / "q") == ["<3 Which is better, Python or Java?"]
    (tmp_path / "topics").write_text("<topics><topic><title>Is tea good?</title></topic></topics>")
    assert read_questions(tmp_path / "topics") == ["Is tea good?"]


def test_read_questions_ends_a_line_at_a_newline_or_carriage_return_only(tmp_path):
    """splitlines() cut "Is tea better\u2028than coffee?" into two questions, each read as a comparison."""
    (tmp_path / "questions.txt").write_text("Is tea better\u2028than coffee?\r\nCats\x85or dogs?\rMac or PC?\n",
                                            newline="")
    assert read_questions(tmp_path / "questions.txt") == ["Is tea better\u2028than coffee?", "Cats\x85or dogs?",
                                                          "Mac or PC?"]


def test_read_questions_passes_over_lines_of_nothing_visible(tmp_path):
    (tmp_path / "questions.txt").write_text("Is tea good?\n\u200b\n \ufeff \nIs coffee good?\n", encoding="utf-8")
    assert read_questions(tmp_path / "questions.txt") == ["Is tea good?", "Is coffee good?"]


def test_read_questions_rejects_bad_input(fixtures, tmp_path):
    with pytest.raises(ToucheError, match="malformed XML"):
        read_questions(fixtures / "questions" / "broken.xml")
    with pytest.raises(ToucheError, match="cannot read"):
        read_questions(tmp_path / "absent.txt")
    (tmp_path / "latin1.txt").write_bytes("Tea?\nCaf\xe9 or tea?".encode("latin-1"))
    with pytest.raises(ToucheError, match=r"latin1.txt is not UTF-8 text \(line 2: byte 0xe9\)$"):
        read_questions(tmp_path / "latin1.txt")  # the line was not said (an attack on the classifier)
    (tmp_path / "latin1.txt").write_bytes(b"\xef\xbb\xbf" + "Tea?\nCaf\xe9 or tea?".encode("latin-1"))
    with pytest.raises(ToucheError, match=r"\(line 2: byte 0xe9\)$"):  # after a byte order mark too
        read_questions(tmp_path / "latin1.txt")


def test_read_questions_reads_the_standard_input_as_dash(monkeypatch):
    """`--file -` was "cannot read questions from -"."""
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("Tea or coffee?\r\nMac or PC?\n".encode())))
    assert read_questions(Path("-")) == ["Tea or coffee?", "Mac or PC?"]
    monkeypatch.setattr(sys, "stdin", None)  # `<&-`: it was an AttributeError, an internal error (a review)
    with pytest.raises(ToucheError, match="the standard input is closed"):
        read_questions(Path("-"))


def test_unknown_method_is_a_user_error():
    with pytest.raises(ToucheError, match="unknown question classifier"):
        load_classifier("bert")


@pytest.fixture(scope="module")
def model():
    return load_classifier("model")


def test_model_types(model):
    assert model.analyze("Should marijuana be legalized?").type == "argumentative"
    assert model.analyze("Which countries legalized marijuana?").type == "factual"
    method = model.analyze("How to hold a referendum on legalizing marijuana?")
    assert method.type == "method" and method.confidence == 1.0
    assert model.analyze("How can we combat cyberbullying?").type == "argumentative"
    assert 0.5 <= model.analyze("Is golf a sport?").confidence <= 1.0


def test_model_comparative_and_objects(model):
    a = model.analyze("Which is better, a laptop or a desktop?")
    assert a.comparative and a.objects == ("laptop", "desktop")
    assert not model.analyze("Should teachers get tenure?").comparative
    assert model.analyze("Is Kenya or Tanzania better for a safari?").objects == ("Kenya", "Tanzania")


def test_model_analyzes_many_questions_at_once(model, monkeypatch):
    questions = [f"Which is better for topic {i}, coffee or tea?" for i in range(50)]
    analyses = model.analyze_many(questions)
    assert len(analyses) == 50 and all(a.objects == ("coffee", "tea") for a in analyses)
    monkeypatch.setattr("app.questions.EMBEDDED_AT_ONCE", 7)  # in batches, the same analyses in the same order
    batched = model.analyze_many(questions)
    assert [(a.question, a.type, a.comparative) for a in batched] == [(a.question, a.type, a.comparative)
                                                                       for a in analyses]
    assert [a.confidence for a in batched] == pytest.approx([a.confidence for a in analyses], abs=1e-4)
    assert model.analyze_many([]) == []


def test_a_question_model_missing_or_of_older_heads_is_a_one_line_error(tmp_path):
    """One without the embedding heads (trained before them) must not fail with a KeyError inside a run."""
    import numpy as np

    from app.questions import ModelClassifier

    with pytest.raises(ToucheError, match="question model missing in .*; train it with `touche train questions`$"):
        ModelClassifier.load(tmp_path)
    (tmp_path / "questions.json").write_bytes((MODELS_DIR / "questions.json").read_bytes())
    with np.load(MODELS_DIR / "questions.npz") as shipped:
        np.savez(tmp_path / "questions.npz", **{k: shipped[k] for k in shipped.files if "dense" not in k})
    with pytest.raises(ToucheError, match="questions.npz has no embedding heads; retrain it with `touche train "
                                          "questions`$"):
        ModelClassifier.load(tmp_path)


def test_model_decides_by_both_heads(model):
    """Each decision is the mean of the n-gram head's and the embedding head's probabilities; the embedding reads
    factual comparisons that the n-grams of opinion questions hid ("Is Mount Everest taller than K2?" was
    argumentative 0.74)."""
    from app.encoder import encode
    from app.questions import hash_features, head_probabilities, question_features

    question = "Is Mount Everest taller than K2?"
    ngrams, embedded = head_probabilities(model.argumentative, [hash_features(question_features(question))],
                                          encode([question]))
    analysis = model.analyze(question)
    assert analysis.type == "factual" and analysis.confidence == pytest.approx(1 - (ngrams[0] + embedded[0]) / 2)
    assert ngrams[0] > 0.5 > embedded[0]


@pytest.mark.parametrize("question, objects", [
    ("Should I buy or rent?", ("buy", "rent")),  # was ("rent",): a verb of choosing was never an object
    ("Should I rent or buy?", ("rent", "buy")),
    ("Is it better to buy or rent a house?", ("buy a house", "rent a house")),
    ("Should I buy a Mac or a PC?", ("Mac", "PC")),  # where something else is chosen, the verb is not
    ("Is the US better than China?", ("US", "China")),  # was ("China",): "US" read as the pronoun
    ("Should I study in the US or in the UK?", ("US", "UK")),
    ("Which is better for us, gas or electricity?", ("gas", "electricity")),
    ("Is IT better than HR?", ("IT", "HR")),
    ("Is coffee BETTER than tea?", ("coffee", "tea")),  # capitals for emphasis: a cue still
    ("Why is Linux MUCH better than Windows?", ("Linux", "Windows")),
    ("IS iPHONE BETTER THAN ANDROID?", ("iPHONE", "ANDROID")),  # a question in capitals: its words as they are
    ("IS IT BETTER TO BUY OR RENT?", ("BUY", "RENT")),
    ("Is vitamin A better than vitamin B?", ("vitamin A", "vitamin B")),  # was "vitamin": "A" read as the article
    ("Is A better than B?", ("A", "B")),
    ("Should I buy a Mac or a PC? A Mac is dearer.", ("Mac", "PC")),  # opening a sentence, "A" is the article
    ("What Is Better: A Mac Or A PC?", ("Mac", "PC")),  # and in a title-cased question
    ("Which is better for me - A Mac or a PC?", ("Mac", "PC")),
])
def test_model_objects_of_choices_and_names_in_capitals(model, question, objects):
    assert model.analyze(question).objects == objects


@pytest.mark.parametrize("question, objects", [
    # an elided head is restored only where the second object is no name and no hyphenated word
    ("Which is better, Barcelona or Real Madrid?", ("Barcelona", "Real Madrid")),  # was "Barcelona Madrid"
    ("Which is better, macOS or Windows 10?", ("macOS", "Windows 10")),  # was "macOS 10"
    ("Which is better, OSI or TCP/IP?", ("OSI", "TCP/IP")),  # was "OSI IP"
    ("What are the differences between biodegradable and non-biodegradable wastes?",
     ("biodegradable wastes", "non-biodegradable wastes")),  # was "biodegradable biodegradable wastes"
    ("Which is better, LED or LCD Reception Displays?", ("LED Reception Displays", "LCD Reception Displays")),
    ("Should I buy steel or ceramic knives?", ("steel knives", "ceramic knives")),
    # objects are whole words, and a question may open with the first
    ("Which is better: AT&T or T-Mobile?", ("AT&T", "T-Mobile")),  # was "T"
    ("green tea vs coffee", ("green tea", "coffee")),  # was "tea": the tags missed the opening word
    ("Coca-Cola vs Pepsi", ("Coca-Cola", "Pepsi")),  # was "Cola"
    ("solar power vs nuclear power", ("solar power", "nuclear power")),  # was "power power"
    ("Real Madrid or Barcelona: which is better?", ("Real Madrid", "Barcelona")),  # was "Madrid"
    ("Which is better,  green   tea or coffee?", ("green tea", "coffee")),  # spaces as in the question
    ("PC-vs-Mac: which is better?", ("PC", "Mac")),  # the comparison joins no words
    ("Which is better, PC-or-Mac?", ("PC", "Mac")),
    ("Should I learn .NET or Java?", (".NET", "Java")),  # was "NET"
    ("Is a $100 phone better than a $1000 one?", ("$100 phone", "$1000")),
    ("Suitcases: hard or soft?", ("hard", "soft")),  # the topic's word before the colon is no part of the first
    ("What is the highest mountain on Earth?", ("mountain",)),  # an object ends before a preposition
    # a pronoun for the aspect: the name after it is compared (2020 Task 2 topic: "Stanford", "that")
    ("Is admission rate in Stanford higher than that of MIT?", ("Stanford", "MIT")),
    ("Are the prices in Norway higher than those in Sweden?", ("Norway", "Sweden")),
])
def test_model_objects_are_whole_names(model, question, objects):
    assert model.analyze(question).objects == objects


@pytest.mark.parametrize("question, objects", [
    # the word before "than" is the comparison only where it reads as one
    ("Is it healthier to bake than to fry food?", ("bake", "fry food")),  # was "healthier": a 2021 topic
    ("Is it better to be a teacher than a lawyer?", ("teacher", "lawyer")),  # was "be"
    ("Is it cheaper to fly than to drive?", ("fly", "drive")),  # was "cheaper"
    ("Are cats better pets than dogs?", ("cats", "dogs")),
    ("Is Java more readable than Python?", ("Java", "Python")),
    ("Is water healthier than beer?", ("water", "beer")),
    ("Is it healthier to eat butter than margarine?", ("eat butter", "margarine")),  # a comparison came before
    ("Is it cheaper to buy paper than plastic?", ("paper", "plastic")),  # so "paper" is no comparison
    # an adverb that ends the question ends no object
    ("Should I learn French or Spanish first?", ("French", "Spanish")),  # was "French first", "Spanish first"
    ("Should I use Windows or Linux now?", ("Windows", "Linux")),
    # a second object with an article of its own keeps its head where the first has none or is a name
    ("Should I buy an iPhone or an Android phone?", ("iPhone", "Android phone")),  # was "iPhone phone"
    ("Which is better, Haskell or a simpler language?", ("Haskell", "simpler language")),  # was "Haskell language"
    ("Should I write my novel in English or in my mother tongue?", ("English", "mother tongue")),
    ("What is better for the environment, a real or a fake Christmas tree?",
     ("real Christmas tree", "fake Christmas tree")),
    ("Is a gas or an electric stove better?", ("gas stove", "electric stove")),
    ("Which is better, truck or fire truck?", ("truck", "fire truck")),  # was "truck truck"
    # words that intensify or state the comparison are no part of an object
    ("Why is Sri Lanka so much cleaner than India?", ("Sri Lanka", "India")),  # was "Sri Lanka so"
    ("Is tea even healthier than coffee?", ("tea", "coffee")),  # was "tea even"
    ("Why is a nonstop flight sometimes dearer than two flights?", ("nonstop flight", "two flights")),
    ("Is there any forum better than Quora?", ("forum", "Quora")),  # was "there any forum"
    # a verb after "do" / "does", or an opinion verb, is no part of the first object
    ("Do dogs make better pets than cats?", ("dogs", "cats")),  # was "dogs make"
    ("Does Python run faster than Ruby?", ("Python", "Ruby")),  # was "Python run"
    ("Does unpasteurized cheese taste better than pasteurized cheese?",  # 2021 Task 2, topic 81
     ("unpasteurized cheese", "pasteurized cheese")),  # was "unpasteurized cheese taste"
    ("Do you think imagination is better than knowledge?", ("imagination", "knowledge")),  # was "think imagination"
    # objects listed with commas before "or" are objects too (the first were dropped: a run compared the last two)
    ("What is better: apples, oranges or bananas?", ("apples", "oranges", "bananas")),
    ("Which is healthiest: coffee, green tea or black tea and why?", ("coffee", "green tea", "black tea")),
    ("Which is healthier, tea or coffee?", ("tea", "coffee")),  # a comparison before the comma lists nothing
    ("In 2020, iPhone or Android?", ("iPhone", "Android")),  # nor a phrase it opens with
])
def test_model_objects_around_the_comparison(model, question, objects):
    assert model.analyze(question).objects == objects


@pytest.mark.parametrize("question, objects", [
    ("How do cigars differ from cigarettes?", ("cigars", "cigarettes")),  # was ("cigarettes",)
    ("How are red giants different from main sequence stars?", ("red giants", "main sequence stars")),
    ("How does Python compare with Java for data science?", ("Python", "Java")),
    ("Is Anthem the same as Blue Cross?", ("Anthem", "Blue Cross")),
    ("Is ObamaCare really any better than Medicare?", ("ObamaCare", "Medicare")),  # was ("any", "Medicare")
    ("How Python compares to Java?", ("Python", "Java")),  # was "Python compares"
    ("Is gold equal to platinum?", ("gold", "platinum")),  # a Touché 2021 title: was "gold equal"
    ("Is Java superior to Python?", ("Java", "Python")),  # was "Java"
    ("Is a Kindle equivalent to a paper book?", ("Kindle", "paper book")),
])
def test_objects_around_words_that_compare(model, question, objects):
    """"differ from", "compared to / with", "the same as" compare as "or" and "than" do; the rules read them too
    (the tagger alone finds most of these objects)."""
    assert model.extract_objects(question)[0] == objects
    assert RuleClassifier().extract_objects(question)[0] == objects


@pytest.mark.parametrize("question, objects", [
    ("Aren't cats better than dogs?", ("cats", "dogs")),  # was "Aren't cats"
    ("Isn't nuclear energy safer than coal?", ("nuclear energy", "coal")),
    ("Is tea not better than coffee?", ("tea", "coffee")),  # was "tea not"
    ("Don't cats make better pets than dogs?", ("cats", "dogs")),  # was "Don't cats make"
    ("Is coffee or not coffee better in the morning?", ("coffee", "not coffee")),  # the object's own "not"
    ("Is Don't Starve better than Terraria?", ("Don't Starve", "Terraria")),  # a name's: was "Starve" (a review)
    ("Is Not Fade Away better than Peggy Sue?", ("Not Fade Away", "Peggy Sue")),
    ("Isn't Python slower than Java?", ("Python", "Java")),  # opening the question: the verb's
    ("Why Isn't Python faster than Java?", ("Python", "Java")),  # after a question word too (a review)
])
def test_a_negation_of_the_verb_or_the_comparison_is_no_part_of_an_object(model, question, objects):
    """Contractions split as the tagger's data splits them ("Aren", "t") and a "not" before the comparison were read
    as the object's words (an attack on the classifier)."""
    assert model.extract_objects(question)[0] == objects


@pytest.mark.parametrize("question, objects", [
    ("Is butter or margarine healthier?", ("butter", "margarine")),  # was "butter healthier", ...
    ("IS BUTTER OR MARGARINE HEALTHIER?", ("BUTTER", "MARGARINE")),
    ("Is rice or pasta more fattening?", ("rice", "pasta")),  # was "rice more fattening", ...
    ("Is job experience more valuable than taking more courses?", ("job experience", "taking more courses")),
    ("Are steel or ceramic knives sharper?", ("steel knives", "ceramic knives")),
    ("Is nuclear power or solar power safer?", ("nuclear power", "solar power")),  # was "solar power safer"
    ("Who was a better boxer, Muhammad Ali or Joe Frazier?", ("Muhammad Ali", "Joe Frazier")),  # a name in -ier
])
def test_a_comparative_closing_the_question_is_no_part_of_an_object(model, question, objects):
    """Where the head was restored, the comparative went onto the first object too ("butter healthier"). (The
    comparative head calls most of these questions not comparative; a comparative run reads its topics' objects
    with `extract_objects` all the same.)"""
    assert model.extract_objects(question)[0] == objects


@pytest.mark.parametrize("question, objects", [
    # a phrase that the comparison opens before "than" is the aspect; the first object comes before it
    ("Is Python better for data science than R?", ("Python", "R")),  # was "data science"
    ("Are cats better at hunting than dogs?", ("cats", "dogs")),  # was "hunting"
    ("Is nuclear power safer for the environment than coal?", ("nuclear power", "coal")),
    ("Is Python more popular for web development than PHP?", ("Python", "PHP")),
    ("Is a dethatching rake significantly better for removing thatch than a regular rake?",
     ("dethatching rake", "regular rake")),
    ("Are roses better in a ceramic vase than a crystal vase?", ("ceramic vase", "crystal vase")),  # its head
    ("Are cats easier to train than dogs?", ("cats", "dogs")),  # was "train"
    # where "it" or "there" comes before the comparison, nothing compared does
    ("Is it better for students to learn Python than Java?", ("Python", "Java")),
    ("As a beginner is it easier for me to learn guitar than piano?", ("guitar", "piano")),  # not "beginner"
    ("Do you think it is better for the economy to raise taxes than cut spending?", ("raise taxes", "cut spending")),
    # an elided head is not restored onto a first object that is whole already, nor from a phrase
    ("Which algorithm is better, quicksort or merge sort?", ("quicksort", "merge sort")),  # was "quicksort sort"
    ("what was made first disneyland or disney world", ("disneyland", "disney world")),  # was "disneyland world"
    ("which one is better ? BMW or infinity G35?", ("BMW", "infinity G35")),  # was "BMW G35"
    ("Vimeo or HBO Max?", ("Vimeo", "HBO Max")),  # an acronym opening a name: was "Vimeo Max" (an attack)
    ("Should I buy Intel or AMD Ryzen?", ("Intel", "AMD Ryzen")),  # was "Intel Ryzen"
    ("Is an Intel or AMD CPU better?", ("Intel CPU", "AMD CPU")),  # the head an acronym too: restored
    ("Should I buy i5 or i7 laptops?", ("i5 laptops", "i7 laptops")),  # the model number is the first word
    ("Should I garden in the fall, or wait until spring?", ("fall", "wait")),  # was "fall until spring"
    ("Should I specialize, or expand into other fields?", ("specialize", "expand into other fields")),
    # names and words that are no part of an object
    ("Is the PS4 or the Xbox One better?", ("PS4", "Xbox One")),  # was "Xbox"
    ("Which one is best among the Moto G3 and Moto G4?", ("Moto G3", "Moto G4")),  # was "among the Moto G3"
    ("Can cows be better pets than dogs?", ("cows", "dogs")),  # was "cows be"
    ("What is city life in India like compared to Nepal?", ("India", "Nepal")),  # was "India like"
    ("How does World War I differ from World War II?", ("World War I", "World War II")),  # "I" a numeral
    ("Napoleon I or Napoleon III?", ("Napoleon I", "Napoleon III")),
    ("Python or Java I think", ("Python", "Java")),  # the pronoun
    ("Mac or PC? Honestly I think Mac", ("Mac", "PC")),
    ("Honestly Bank of America or Chase?", ("Bank of America", "Chase")),  # was "Honestly Bank of America"
    ("A or B?", ("A", "B")),  # was ("B",): the article
    ("A vs B vs C vs D", ("A", "B")),  # was ("B", "C")
    ("Seriously, Coke or Pepsi?", ("Coke", "Pepsi")),
    ("Personally Red Bull or Monster?", ("Red Bull", "Monster")),
    ("Personally identifiable data or anonymous data?", ("Personally identifiable data", "anonymous data")),
    ("Is Perhaps or Maybe the better song?", ("Perhaps", "Maybe")),  # the adverbs open no question here
    ("is ubuntu better then fedora", ("ubuntu", "fedora")),  # "then" mistyped; was "then fedora"
    ("Is Python better for data science then R?", ("Python", "R")),
    ("Should I learn Python first and then Java?", ("Python", "Java")),  # no comparison: "then" the adverb
    ("Is Star Wars better than Star Trek?", ("Star Wars", "Star Trek")),  # was "Wars": a name's capitals
    ("Which one for a Thinkpad with little RAM - Windows 7 or Windows XP?", ("Windows 7", "Windows XP")),  # a dash
    ("Is a Honda Accord more fuel efficient than a Nissan Altima?", ("Honda Accord", "Nissan Altima")),  # "fuel"
    # names joined by "of": the tags find one side
    ("Lord of the Rings or Harry Potter", ("Lord of the Rings", "Harry Potter")),  # was "Rings"
    ("University of Michigan or Ohio State University?", ("University of Michigan", "Ohio State University")),
    ("The Great Wall of China or the Taj Mahal, which is more impressive?", ("Great Wall of China", "Taj Mahal")),
    ("Which is older, the Great Wall of China or the Pyramids of Giza?", ("Great Wall of China", "Pyramids of Giza")),
    ("Is Bank of New York better than Chase?", ("Bank of New York", "Chase")),
    ("Is the Statue of Liberty taller than Big Ben?", ("Statue of Liberty", "Big Ben")),  # was "Liberty"
    ("What Is The Best Type Of Tea Or Coffee?", ("Tea", "Coffee")),  # in title case "of" joins no name
    ("What is the best type of tea or coffee?", ("tea", "coffee")),
    # a verb chosen opens the second object; what it takes is no head the first shares
    ("Is it better to rent or buy a house?", ("rent", "buy a house")),  # was ("rent", "house")
    ("should i lease or buy a car", ("lease", "buy a car")),
    ("Should I buy a Mac or get a PC?", ("Mac", "PC")),  # where a thing is chosen first, so is the second
    ("Should I go to college or learn a trade?", ("college", "learn a trade")),
    ("Is it cheaper to cook at home or eat out?", ("home", "eat out")),  # was "home out": a particle
])
def test_objects_beside_phrases_and_shared_heads(model, question, objects):
    assert model.extract_objects(question)[0] == objects


def test_a_preference_stated_is_no_part_of_an_object(model):
    assert model.extract_objects("Why is bronze preferred over copper for statues?")[0] == ("bronze", "copper")


def test_a_question_ending_in_between_x_and_is_analysed():
    """"What is the difference between cats and" (a title cut at 5,000 characters may end so) was an IndexError
    that also ended `touche run`."""
    question = "What is the difference between cats and"
    assert load_classifier("model").extract_objects(question)[0] == ("cats",)
    assert RuleClassifier().extract_objects(question)[0] == ()


@pytest.mark.parametrize("question, comparative", [
    ("Python or Java?", True), ("Cats or dogs?", True), ("Suitcases: hard or soft?", True),  # a 2021 topic
    ("Python versus Java", True), ("Tea or coffee for breakfast?", True), ("Node.js or Deno?", True),
    ("Is it raining or not?", False), ("Happiness or satisfaction? What does the mind crave?", False),
])
def test_bare_alternative_questions_compare(model, question, comparative):
    """The comparative head gave these 0.2-0.3: its data hardly holds questions so short."""
    assert model.analyze(question).comparative is comparative


@pytest.mark.parametrize("question, objects", [
    ("Is butter or margarine healthier?", ("butter", "margarine")),  # the head alone: not comparative
    ("Are steel or ceramic knives sharper?", ("steel knives", "ceramic knives")),
    ("Is it safer to fly or drive?", ("fly", "drive")),
    ("Is yahoo or google better?", ("yahoo", "google")),
    ("Is it raining or not?", ()),  # no comparative
    # two sentences, commas: not the rule's, the head's to decide (with the embedding head it calls them comparative;
    # the n-gram head alone did not)
    ("Is butter healthier? Or margarine?", ("butter", "margarine")),
    ("Is it healthier, in your view, to eat butter or margarine?", ("eat butter", "margarine")),
])
def test_a_choice_that_a_comparative_closes_or_opens_compares(model, question, objects):
    assert model.analyze(question).objects == objects


@pytest.mark.parametrize("question, fires", [
    ("Is butter or margarine healthier?", True), ("Is Butter Or Margarine Healthier?", True),
    ("Is yahoo or google better?", True), ("Is it safer to fly or drive?", True),
    ("Is rice or pasta more fattening?", True),
    ("Is butter, or margarine, healthier?", False),  # commas
    ("Is tea or coffee or cocoa healthier?", False),  # more than one "or"
    ("Should I eat less or more sugar?", False),  # "more" not after the second
    ("Is it true that butter or margarine made at home by my grandmother is healthier?", False),  # over 12 words
    ("Butter or margarine: which is healthier?", False),  # no auxiliary opens it
])
def test_closing_comparison(question, fires):
    assert closing_comparison(question) is fires


@pytest.mark.slow
def test_model_extracts_most_touche_objects(model, shared_data):
    from app.topics import read_topics
    from app.training.questions import GOLD_OBJECTS, normalise_object

    topics = [t for t in read_topics(shared_data / GOLD_OBJECTS) if t.objects]
    exact = [tuple(map(normalise_object, model.extract_objects(t.title)[0]))
             == tuple(map(normalise_object, t.objects)) for t in topics]
    assert len(topics) == 50 and sum(exact) >= 40


def test_object_pairs_are_measured_on_questions_as_written():
    """The tagged questions are lowercase words without punctuation; the object rules read capitals and commas, so
    the pairs are scored on the question as its asker wrote it, found by its words."""
    from app.training.questions import exact_pairs, written_pairs

    tagged = [("which is better python or java".split(), ["O", "O", "PRED", "OBJ", "O", "OBJ"]),
              ("is tea better than coffee or cocoa".split(), ["O", "OBJ", "PRED", "O", "OBJ", "O", "OBJ"]),
              ("is rust safer than go".split(), ["O", "OBJ", "PRED", "O", "OBJ"])]
    pairs = written_pairs(tagged, ["Which is better, Python or Java?", "Is tea better than coffee or cocoa?"])
    assert pairs == [("Which is better, Python or Java?", ("python", "java"))]  # three objects, or not written: out
    assert exact_pairs(lambda question: (("Python", "Java"), None), pairs) == 1.0
    assert exact_pairs(lambda question: (("Java", "Python"), None), pairs) == 0.0  # in order


def test_the_tagger_weighs_tag_transitions_down():
    """Viterbi over the transitions at full weight cost OBJ F1 (0.802 against 0.833 at 0.25, CV on the training
    part): the fitted tagger scales them, start and transitions alike."""
    from app.training.questions import fit_tagger

    tagged = [("is tea better than coffee for breakfast".split(), ["O", "OBJ", "PRED", "O", "OBJ", "O", "ASP"]),
              ("which is faster c or go".split(), ["O", "O", "PRED", "OBJ", "O", "OBJ"])]
    full, scaled = fit_tagger(tagged, 13, transition_weight=1.0), fit_tagger(tagged, 13, transition_weight=0.25)
    np.testing.assert_allclose(scaled.transitions, full.transitions * 0.25, rtol=1e-6)
    np.testing.assert_allclose(scaled.start, full.start * 0.25, rtol=1e-6)
    assert json.loads((MODELS_DIR / SETTINGS_FILE).read_text())["transition_weight"] == 0.25


def test_a_title_that_drives_a_head_far_gives_no_overflow_warning(recwarn):
    """A 5,000-character title of commas printed numpy's "overflow encountered in exp" on stderr."""
    load_classifier("model").analyze(("x, " * 5000)[:4990])
    assert not [warning for warning in recwarn if issubclass(warning.category, RuntimeWarning)]


def test_a_classifier_of_non_finite_weights_is_not_saved_over_the_old_one(model, tmp_path):
    """A head that diverged (NaN) was written with exit 0, and every later question classified as NaN decides."""
    import copy

    from app.training.questions import save

    save(model, tmp_path, {}, 13)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    broken = copy.deepcopy(model)
    broken.comparative[1].weights[0] = np.nan
    with pytest.raises(ToucheError, match=r"non-finite weights \(comparative_dense_w\); .*not written"):
        save(broken, tmp_path, {}, 13)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_topic_without_objects_is_said_in_one_short_line(caplog):
    """A title may hold 5,000 characters; the warning quotes its start."""
    from types import SimpleNamespace

    from app.questions import with_objects
    from app.records import Topic

    topic = Topic("1", "tea " * 1250)
    assert with_objects(topic, SimpleNamespace(comparative=True, objects=())) is topic
    assert with_objects(topic, SimpleNamespace(comparative=True, objects=("tea",))) is topic  # one
    assert f"topic 1: no two compared objects found in '{'tea ' * 19}tea…'" in caplog.text
    assert max(len(line) for line in caplog.text.splitlines()) < 200


def test_comparative_topics_without_objects_get_their_questions_in_question_order():
    """2020/21 Task 2 topics hold no <objects>: swapped objects swap FIRST and SECOND in every label, none label
    every document NO."""
    from app.questions import topic_task
    from app.records import Topic

    _, topics, _ = topic_task([Topic("1", "Which is better, a cat or a dog?"), Topic("2", "Suitcases: hard or soft?"),
                               Topic("3", "Should I buy a Mac or a PC?", objects=("PC", "Mac"))])
    assert [topic.objects for topic in topics] == [("cat", "dog"), ("hard", "soft"), ("PC", "Mac")]


@pytest.mark.parametrize("found", [("this", "that"), ("laptop", "Laptop"), ("the", "Nikon")])
def test_objects_the_classifier_finds_pass_the_checks_given_objects_pass(caplog, found):
    """"Which is better: this or that?" gave its passages sides toward "that", unsaid; <objects> refuses such."""
    from types import SimpleNamespace

    from app.questions import with_objects
    from app.records import Topic

    topic = Topic("9", "Which is better: this or that?")
    assert with_objects(topic, SimpleNamespace(comparative=True, objects=found)) is topic
    assert "topic 9: no two compared objects found" in caplog.text
    assert with_objects(topic, SimpleNamespace(comparative=True, objects=("tea", "coffee", "milk"))).objects == (
        "tea", "coffee")
    # of three, the first two that are two objects: "tea, teas or coffee" compared nothing
    assert with_objects(topic, SimpleNamespace(comparative=True, objects=("tea", "teas", "coffee"))).objects == (
        "tea", "coffee")


def test_a_topic_the_classifier_reads_as_no_comparison_gets_no_objects_in_a_comparative_run(caplog):
    """Its objects were extracted anyway ("school uniforms" and "mandatory") and its documents labelled FIRST or
    SECOND of them."""
    from app.questions import topic_task
    from app.records import Topic

    task, topics, _ = topic_task([Topic("1", "Which is better, a cat or a dog?"), Topic("2", "Tea or coffee?"),
                                  Topic("3", "Should school uniforms be mandatory?")])
    assert task == "comparative" and [topic.objects for topic in topics] == [("cat", "dog"), ("Tea", "coffee"), None]
    assert "topic 3: no two compared objects found in 'Should school uniforms be mandatory?'" in caplog.text


def test_the_question_classifier_embeds_titles_on_the_runs_device_and_precision(monkeypatch):
    """`--precision fp32` left the titles embedded at bf16 where the CPU has it."""
    import app.questions
    from app.questions import topic_task
    from app.records import Topic

    asked, shipped = [], app.questions.encode
    monkeypatch.setattr(app.questions, "encode",
                        lambda texts, **kwargs: asked.append(kwargs) or shipped(texts, **kwargs))
    topic_task([Topic("1", "Which is better, a cat or a dog?")], device="cpu", precision="fp32")
    assert asked == [{"device": "cpu", "precision": "fp32"}]
