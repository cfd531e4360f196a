"""HTML to plain text: web pages (ChatNoir's cache) through Resiliparse, the extractor ChatNoir itself uses, and
highlighted titles and snippets (or a page Resiliparse cannot read) through lxml."""

from __future__ import annotations

import re

from lxml import etree
from lxml import html as lxml_html
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

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
# What a page's text never holds: besides those, DEL and the C1 controls, which Resiliparse passes through.
_UNREADABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
# How a page's text is read: "main" Resiliparse's main content (menus, footers and sidebars dropped), "full" all
# visible text. Main is the default: on the dev web pages it ranked better on 2 of 3 measures and on average
# (README, "Web pages"), and the whole page's text statistics, which the quality head reads, are less menu.
PAGE_TEXTS = ("main", "full")
PAGE_TEXT = "main"


def read_page(markup: str, page_text: str = PAGE_TEXT) -> str:
    """The text of a web page, as ChatNoir extracts it: Resiliparse's main content (`page_text="main"`) or all
    its visible text ("full"); a page whose main content is empty gives all its text, and one Resiliparse
    cannot read gives what the lxml reader (`html_to_text`) finds."""
    if page_text not in PAGE_TEXTS:
        raise ValueError(f"page_text must be one of {PAGE_TEXTS}, got {page_text!r}")
    # Resiliparse cannot encode lone surrogates and passes control characters through to the text.
    markup = _UNREADABLE.sub(" ", markup)
    try:
        tree = HTMLTree.parse(markup)
        text = _plain_text(tree, main_content=page_text == "main")
        if not text and page_text == "main":
            text = _plain_text(tree, main_content=False)
    except (ValueError, UnicodeError, RuntimeError):
        text = ""
    return text or html_to_text(markup)


def _plain_text(tree: HTMLTree, main_content: bool) -> str:
    # No list bullets: the lxml reader adds none, and the quality model counts symbols.
    return normalize_whitespace(extract_plain_text(tree, main_content=main_content, list_bullets=False))


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
