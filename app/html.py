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
# Resiliparse's main-content extraction takes time quadratic in the depth of the page's element tree: 0.2 s at
# 5,000 nested elements, 4 s at 20,000, minutes for a 1 MB page of unclosed <div>s or <font>s. The dev pages nest at
# most 74 deep (`_nesting_depth`); a page deeper than this is read whole ("full"), which takes linear time.
MAX_MAIN_DEPTH = 500
_TAG = re.compile(r"<!--|<[!?]|</(?![a-zA-Z])|<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")
_COMMENT_END = re.compile(r"--!?>")
_EMPTY_COMMENT_END = re.compile(r"-?>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# Elements whose content the HTML parser reads as text up to their end tag (plaintext: to the end of the page), so
# a "</div>" inside one closes nothing; found by parsing with Resiliparse (noscript is not one: it parses markup).
_RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes plaintext".split())
_RAW_TEXT_END = {name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE | re.ASCII) for name in _RAW_TEXT}


def read_page(markup: str, page_text: str = PAGE_TEXT) -> str:
    """The text of a web page, as ChatNoir extracts it: Resiliparse's main content (`page_text="main"`) or all
    its visible text ("full"); a page whose main content is empty gives all its text, and one Resiliparse
    cannot read gives what the lxml reader (`html_to_text`) finds."""
    if page_text not in PAGE_TEXTS:
        raise ValueError(f"page_text must be one of {PAGE_TEXTS}, got {page_text!r}")
    # Resiliparse cannot encode lone surrogates and passes control characters through to the text.
    markup = _UNREADABLE.sub(" ", markup)
    if page_text == "main" and _nesting_depth(markup) > MAX_MAIN_DEPTH:
        page_text = "full"
    try:
        tree = HTMLTree.parse(markup)
        text = _plain_text(tree, main_content=page_text == "main")
        if not text and page_text == "main":
            text = _plain_text(tree, main_content=False)
    except (ValueError, UnicodeError, RuntimeError):
        text = ""
    return text or html_to_text(markup)


def _comment_end(markup: str, position: int) -> int:
    """Where a comment opened just before `position` ends, as the parser ends it: "<!-->" and "<!--->" at once,
    the rest after "-->" or "--!>", an unclosed one with the page."""
    end = _EMPTY_COMMENT_END.match(markup, position) or _COMMENT_END.search(markup, position)
    return len(markup) if end is None else end.end()


def _raw_text_end(markup: str, name: str, position: int) -> int:
    """Where the text of raw-text element `name` opened just before `position` ends: at its end tag (which stays
    for the caller), or with the page (plaintext, or no end tag)."""
    end = _RAW_TEXT_END[name].search(markup, position) if name != "plaintext" else None
    return len(markup) if end is None else end.start()


_BULK = re.compile(r"<!--|<(script|style)(?=[\s/>])[^>]*>|data:[^\"'\s)>]{1000,}", re.IGNORECASE | re.ASCII)


def without_bulk(markup: str) -> str:
    """The markup without what holds no readable text yet can fill megabytes before a page's text begins: comments,
    scripts, styles and long inline `data:` URIs (base64 images). Extraction skips them anyway; cut out first, they
    no longer push the text past the bound a page is cut to. It reads no context (a "<!--" in an attribute starts a
    comment here), so it is for pages past that bound only. Linear in the markup: a tag is sought only up to the
    last ">", where no tag can fail to end."""
    kept, position, last = [], 0, markup.rfind(">") + 1
    while (bulk := _BULK.search(markup, position, last)) is not None:
        kept.append(markup[position:bulk.start()])
        if bulk.group(0) == "<!--":
            position = _comment_end(markup, bulk.end())
        elif bulk.group(1):  # up to its end tag, which stays as a stray end tag the parser ignores
            position = _raw_text_end(markup, bulk.group(1).lower(), bulk.end())
        else:
            kept.append("data:")
            position = bulk.end()
    kept.append(markup[position:])
    return "".join(kept)


def _nesting_depth(markup: str) -> int:
    """How deep a page's elements nest at most, as a tag stack counts it: void and self-closed elements do not
    open, and an end tag closes its element and the ones left open inside it, or nothing if none is open (so
    "<div></p>" cannot hide a level). Comments and the content of raw-text elements (scripts, styles, ...) are
    passed over as the parser passes them, so an end tag in them cannot hide a level either. Linear in the markup:
    about 0.2 ms for a typical page."""
    stack: list[str] = []
    open_counts: dict[str, int] = {}
    deepest = 0
    position = 0
    last = markup.rfind(">") + 1  # a tag is sought only up to here, where none can fail to end: linear time
    while (tag := _TAG.search(markup, position, last)) is not None:
        position = tag.end()
        if tag.group(0) == "<!--":
            position = _comment_end(markup, position)
            continue
        if tag.group(0) in ("<!", "<?", "</"):  # doctype, CDATA, "</ div>": a bogus comment to the next ">"
            end = markup.find(">", position)
            position = len(markup) if end < 0 else end + 1
            continue
        closing, name, self_closed = tag.groups()
        name = name.lower()
        if not closing and name in _RAW_TEXT:
            deepest = max(deepest, len(stack) + 1)
            position = _raw_text_end(markup, name, position)
            continue
        if closing:
            if open_counts.get(name):
                while True:
                    inner = stack.pop()
                    open_counts[inner] -= 1
                    if inner == name:
                        break
        elif name not in _VOID and not self_closed:
            stack.append(name)
            open_counts[name] = open_counts.get(name, 0) + 1
            deepest = max(deepest, len(stack))
    return deepest


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
