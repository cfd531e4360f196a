"""Web pages to text: whatever bytes a real page holds, the text comes out and lxml never raises."""

import pytest

from app.html import html_to_text

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
