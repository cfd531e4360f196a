"""HTML to plain text with lxml, for web pages (ChatNoir's cache) and highlighted titles/snippets."""

from __future__ import annotations

import re

from lxml import etree
from lxml import html as lxml_html

# Elements whose text is never part of the readable page.
_INVISIBLE = ("script", "style", "noscript", "template", "svg", "head", "iframe", "object")
# Elements that start a new line; without a break their text would run into the neighbour's ("foo</p><p>bar").
_BLOCKS = (
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
    "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul",
)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
# Characters lxml refuses in text ("All strings must be XML compatible"); real pages hold them (NUL, 0x13, ...).
_XML_INCOMPATIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")


def html_to_text(markup: str) -> str:
    """Return the visible text of an HTML page or fragment, one block per line, whitespace collapsed."""
    # lxml refuses str input that declares an encoding, and characters XML does not allow.
    markup = _XML_INCOMPATIBLE.sub(" ", _XML_DECLARATION.sub("", markup))
    if not markup.strip():
        return ""
    try:
        root = lxml_html.document_fromstring(markup)
    except (etree.ParserError, ValueError):
        return normalize_whitespace(markup)
    for element in list(root.iter(*_INVISIBLE)):
        element.drop_tree()
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    for element in root.iter(*_BLOCKS):
        element.text = "\n" + (element.text or "")
        element.tail = "\n" + (element.tail or "")
    return normalize_whitespace(root.text_content())


def normalize_whitespace(text: str) -> str:
    """Collapse runs of spaces within lines and drop empty lines."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)
