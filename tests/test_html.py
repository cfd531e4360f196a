"""Web pages to text: whatever bytes a real page holds, the text comes out and lxml never raises."""

import unicodedata

import pytest

from app.html import MAX_MAIN_DEPTH, _nesting_depth, html_to_text, read_page, without_bulk

# Every C0 and C1 control character, the XML non-characters and lone surrogates: real ClueWeb pages hold them.
ODD_CHARACTERS = [chr(code) for code in [*range(0x00, 0x20), *range(0x7F, 0xA0), 0xD800, 0xDFFF, 0xFFFE, 0xFFFF]]


@pytest.mark.parametrize("character", ODD_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_any_character_in_text_attributes_or_comments_is_survived(character):
    page = (f'<?xml version="1.0" encoding="utf-8"?><html><head><title>t{character}</title></head><body>'
            f'<p title="x{character}">Tenure{character}protects</p><!-- {character} --><p>freedom</p></body></html>')
    text = html_to_text(page)
    assert text.startswith("Tenure") and text.endswith("freedom")
    assert "".join(html_to_text(f"plain{character}text").split()) in ("plaintext", f"plain{character}text")


def test_visible_text_one_block_per_line():
    markup = ('<?xml version="1.0" encoding="utf-8"?><html><head><title>T</title><script>x=1</script></head>'
              '<body><div>a<p>b <em>c</em>d</p><!-- note --><noscript>n</noscript>e<br>f&amp;g</div></body></html>')
    assert html_to_text(markup) == "a\nb cd\ne\nf&g"


PAGE = ('<!doctype html><meta charset="utf-8"><title>Cats &amp; dogs</title><body>'
        '<nav><a href="/">Home</a> | <a href="/about">About</a></nav>'
        '<article><h1>Cats or dogs?</h1><p>Cats are independent. Dogs need walks every day.</p>'
        '<ul><li>Cats: cheaper</li><li>Dogs: loyal</li></ul></article>'
        '<footer>Copyright 2012 | Privacy</footer></body>')


def test_pages_are_read_by_main_content_or_whole():
    assert read_page(PAGE) == "Cats or dogs?\nCats are independent. Dogs need walks every day."  # a list is no content
    full = read_page(PAGE, "full")
    assert full.startswith("Home | About\nCats or dogs?") and "Dogs: loyal" in full
    assert full.endswith("Copyright 2012 | Privacy") and "Cats & dogs" not in full  # the <title> is no text
    with pytest.raises(ValueError):
        read_page(PAGE, "best")


def test_a_page_nested_too_deep_for_main_content_is_read_whole():
    """Main-content extraction is quadratic in the element tree's depth (minutes for a 1 MB page of unclosed
    <font>s); past MAX_MAIN_DEPTH the page is read as "full" does, in linear time."""
    deep = "<html><body><nav>Home | About</nav><p>" + "<font>" * (MAX_MAIN_DEPTH + 1) + "Cats are independent."
    assert _nesting_depth(deep) == MAX_MAIN_DEPTH + 4
    assert read_page(deep) == read_page(deep, "full") == "Home | About\nCats are independent."
    assert _nesting_depth(PAGE) < MAX_MAIN_DEPTH and read_page(PAGE) != read_page(PAGE, "full")


def test_nesting_depth_counts_what_a_parser_keeps_open():
    assert _nesting_depth("<div><br><img src=x><p/><span></span></div>") == 2  # void and self-closed do not open
    assert _nesting_depth("<div><p><b>a</div><div>b</div>") == 3  # </div> closes the <p> and <b> left open in it
    assert _nesting_depth("<div></p>" * 1000) == 1000  # an end tag with nothing open to close hides no level


@pytest.mark.parametrize("unit", ["<div><!--</div>-->", "<div><script>'</div>'</script>", "<div><![CDATA[</div>]]>",
                                  "<div><title></div></title>", "<div><STYLE>p:after{content:'</div>'}</style >",
                                  "<div></ </div>", "<div></0</div>", "<div><script></\u017fcript></div></script>"])
def test_an_end_tag_the_parser_reads_as_text_hides_no_level(unit):
    """A 1 MB page of such units took 77 s to read when the count believed its "</div>"s."""
    assert _nesting_depth(unit * 1000) >= 1000


def test_a_comment_ends_where_the_parser_ends_it():
    assert _nesting_depth("<div><!-- unclosed </div><div>") == 1  # the rest of the page is the comment
    assert _nesting_depth("<div><plaintext></div><div>") == 2  # the rest of the page is text
    assert _nesting_depth("<div><!--></div>" * 1000) == 1  # "<!-->" is an empty comment: the </div> is real
    assert _nesting_depth("<div><!--x--!></div>" * 1000) == 1  # "--!>" ends a comment too


def test_a_page_without_main_content_or_markup_keeps_its_text():
    assert read_page("<html><body><nav>Only a menu | Home</nav></body></html>") == "Only a menu | Home"
    assert read_page("just words, no markup") == "just words, no markup"
    assert read_page("") == "" and read_page("<title>T</title>") == ""


@pytest.mark.parametrize("character", ODD_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_any_character_in_a_page_is_survived(character):
    text = read_page(f"<title>t{character}</title><body><p>Tenure{character}protects</p>{character}"
                     f"<p>academic freedom</p></body>")
    assert text.startswith("Tenure") and text.endswith("academic freedom")
    assert not any(unicodedata.category(c) in ("Cc", "Cs", "Cn") for c in text.replace("\n", ""))


def test_without_bulk_drops_what_holds_no_text_and_keeps_the_text():
    image = "data:image/png;base64," + "A" * 1_200_000
    page = (f'<html><head><style>p {{color: red}}</style><script>var s = "</div>";</script></head><body>'
            f'<img src="{image}"><!-- a note --><p>The text of the page.</p><script>unclosed')
    slim = without_bulk(page)
    assert len(slim) < 200 and "The text of the page." in slim and 'src="data:"' in slim
    assert read_page(slim[:1_000_000]) == "The text of the page." == read_page(page)
    assert without_bulk("<p>a</p><!--> <p>b</p>") == "<p>a</p> <p>b</p>"  # "<!-->" is an empty comment
