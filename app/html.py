"""HTML to plain text: web pages (ChatNoir's cache) through Resiliparse, the extractor ChatNoir itself uses, and
highlighted titles and snippets (or a page Resiliparse cannot read) through lxml."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape

from lxml import etree
from lxml import html as lxml_html
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from .records import clean_text, without_unreadable

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
# Runs of the markup's whitespace, which a page past the bound (`without_bulk`) reads as one: a megabyte of
# newlines before the article filled the bound.
_MARKUP_SPACES = " \t\n\r\f"
_WHITESPACE_RUN = re.compile(f"[{_MARKUP_SPACES}]{{2,}}")
_WHITESPACE_REST = re.compile(f"[{_MARKUP_SPACES}]*")
_LINE_BREAK = re.compile(r"[\n\r]")
# How a page's text is read: "main" Resiliparse's main content (menus, footers and sidebars dropped), "full" all
# visible text. Main is the default: on the dev web pages it ranked better on 2 of 3 measures and on average
# (README, "Web pages"), and the whole page's text statistics, which the quality head reads, are less menu.
PAGE_TEXTS = ("main", "full")
PAGE_TEXT = "main"
# Resiliparse's main-content extraction takes time quadratic in the depth of the page's element tree: 0.2 s at
# 5,000 nested elements, 4 s at 20,000, minutes for a 1 MB page of unclosed <div>s or <font>s; its plain text
# indents each list item once per open list (60,000 nested lists of an item each: 8 GB, and the process aborts). The
# dev pages nest at most 74 deep (`tree_shape`); a page deeper than this is read by `tag_text`, in linear time.
MAX_MAIN_DEPTH = 500
# Elements the parser reopens (`tree_shape`) cost it memory: 20,000 unclosed <b>s of distinct attributes among 4,000
# <div>s, a 257 kB page, took 7.6 GB. None of the dev pages reopens any; past this a page is read by
# `tag_text` too.
MAX_REOPENED = 100_000
# Attributes on one element: the parser checks each new one against those before it, so 25,000 distinct attributes
# on one <p> took it 1.5 s, 100,000 27 s and 160,000 (a 912 kB page) over a minute, all of it holding the GIL (no
# other page is fetched and a stop waits). The ClueWeb12 pages ChatNoir serves carry at most 2; past this a page is
# read by `tag_text` too.
MAX_ATTRIBUTES = 1_000
# Options of one <select>: the parser takes time quadratic in them (20,000 options: 2 s; a 2 MB list of them over a
# minute). The dev pages have none; a country list has about 250.
MAX_OPTIONS = 5_000
_TAG = re.compile(r"<!--|<[!?]|</(?![a-zA-Z])|<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")
_UNFINISHED_TAG = re.compile(r"<[a-zA-Z!?/]")
_NOFRAMES_START = re.compile(r"<noframes[\s/>]", re.IGNORECASE | re.ASCII)
# Start tags that may come before a <frameset> the parser keeps (any other begins the body, and it is ignored).
_BEFORE_FRAMESET = frozenset("html head meta link title script style base noscript template frame noframes".split())
# An attribute's value, quoted or not ("/" and "=" belong to an unquoted one), and where an attribute begins in a
# start tag whose values are emptied: a name after whitespace, a slash or a value. The look-behind makes a run of
# spaces one match attempt, not one per space (a 1 MB tag of spaces took hours).
_VALUE = re.compile(r"""=\s*+(?:"[^"]*+"|'[^']*+'|[^\s>]++)""")
_ATTRIBUTE = re.compile(r"""(?<![\s/"'])[\s/"']++[^\s/>="']""")
_COMMENT_END = re.compile(r"--!?>")
_EMPTY_COMMENT_END = re.compile(r"-?>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# The elements the HTML parser reopens where an ancestor's end tag closed them ("active formatting elements"), the
# elements whose end clears them instead (table cells and the like: "markers"), and the start tags before which
# none is reopened (blocks, table parts, the document's frame); text and any other start tag reopen them.
_FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
_MARKERS = frozenset("td th caption applet marquee object template".split())
_NOT_REOPENING = frozenset(_BLOCKS) | frozenset(
    "html head body title meta link base style script caption colgroup col tbody thead tfoot menu details summary "
    "dialog center dir listing search hgroup frameset frame noframes template plaintext".split())
# The parser's "special" elements, its scope boundaries (with <button>, so that a </p> errs toward deep; and the
# HTML integration points of SVG and MathML), the table scope, the lists, and the start tags that close an open <p>.
_SPECIAL = frozenset(
    "address applet area article aside base basefont bgsound blockquote body br button caption center col colgroup "
    "dd details dir div dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head "
    "header hgroup hr html iframe img input keygen li link listing main marquee menu meta nav noembed noframes "
    "noscript object ol p param plaintext pre script search section select source style summary table tbody td "
    "template textarea tfoot th thead title tr track ul wbr xmp mi mo mn ms mtext annotation-xml foreignobject "
    "desc".split())
_SPECIAL_BUT_ADP = _SPECIAL - {"address", "div", "p"}
_SCOPE = frozenset("applet caption html table td th marquee object template button mi mo mn ms mtext "
                   "annotation-xml foreignobject desc".split())
_TABLES = frozenset("html table template".split())
_LISTS = frozenset("ol ul".split())
_KINDS = (_SPECIAL, _SPECIAL_BUT_ADP, _SCOPE, _TABLES, _LISTS)
_CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer header "
    "hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 h6 pre listing form plaintext xmp hr li dd "
    "dt".split())
# Elements whose content the HTML parser reads as text up to their end tag (plaintext: to the end of the page), so
# a "</div>" inside one closes nothing; found by parsing with Resiliparse (noscript is not one: it parses markup).
_RAW_TEXT = frozenset("script style textarea title xmp iframe noembed noframes plaintext".split())
_RAW_TEXT_END = {name: re.compile(rf"</{name}[\s/>]", re.IGNORECASE | re.ASCII) for name in _RAW_TEXT}


def read_page(markup: str, page_text: str = PAGE_TEXT) -> str:
    """The text of a web page, as ChatNoir extracts it: Resiliparse's main content (`page_text="main"`) or all
    its visible text ("full"); a page whose main content is empty gives all its text, and one Resiliparse
    cannot read gives what the lxml reader (`html_to_text`) finds, or else `tag_text`. A page whose tree would nest past
    MAX_MAIN_DEPTH, reopen more than MAX_REOPENED elements, give one more than MAX_ATTRIBUTES attributes or a
    <select> more than MAX_OPTIONS options (`tree_shape`) is read by `tag_text`."""
    if page_text not in PAGE_TEXTS:
        raise ValueError(f"page_text must be one of {PAGE_TEXTS}, got {page_text!r}")
    # Resiliparse cannot encode lone surrogates and passes control characters through to the text.
    markup = _without_frames(without_unreadable(markup))
    shape = tree_shape(markup)
    if (shape.depth > MAX_MAIN_DEPTH or shape.reopened > MAX_REOPENED or shape.attributes > MAX_ATTRIBUTES
            or shape.options > MAX_OPTIONS):
        return tag_text(markup)
    return _resiliparse_text(markup, page_text) or html_to_text(markup) or tag_text(markup)  # lxml stops at 256 levels


def _resiliparse_text(markup: str, page_text: str) -> str:
    """Resiliparse's text of a page as `read_page` asks it; "" where it cannot read it. Its tree is gone when this
    returns, before the lxml reader builds its own: both held, 4 MB of <br> took 720 MB, 462 MB so."""
    try:
        tree = HTMLTree.parse(markup)
        text = _plain_text(tree, main_content=page_text == "main")
        if not text and page_text == "main":
            text = _plain_text(tree, main_content=False)
        return text
    except (ValueError, UnicodeError, RuntimeError, MemoryError):
        return ""
    except BaseException as error:  # a Rust panic in Resiliparse comes as pyo3's PanicException, a BaseException
        if type(error).__name__ != "PanicException":
            raise
        return ""


def _without_frames(markup: str) -> str:
    """A frameset page's `<noframes>` markup, which is all the text it has (the frames are other pages): the parser
    reads it as raw text, so its tags and entities came out as text. On other pages the `<noframes>` elements go, as
    a browser that shows frames hides them ("Your browser does not support frames"). Tags are found as the parser
    finds them (`_tokens`), so a "<noframes>" in a script, a comment or an attribute is none; and a <frameset> after
    the body began (text, a <body>, an element of it) is none either, as the parser ignores it."""
    if not _NOFRAMES_START.search(markup):
        return markup
    frameset = body = False
    spans, start = [], None  # spans: each element's (start, content start, content end, end)
    for token in _tokens(markup):
        if isinstance(token, str):
            body = body or not token.isspace()
            continue
        closing, name = token.group(1), token.group(2).lower()
        if name == "noframes" and not closing:
            start = token
        elif name == "noframes" and start is not None:
            spans.append((start.start(), start.end(), token.start(), token.end()))
            start = None
        elif name == "frameset" and not closing:
            frameset = frameset or not body
        elif not closing and name not in _BEFORE_FRAMESET:
            body = True
    if start is not None:  # open to the end of the page
        spans.append((start.start(), start.end(), len(markup), len(markup)))
    if frameset:
        return "\n".join(markup[begin:end] for _, begin, end, _ in spans)
    kept, position = [], 0
    for begin, _, _, end in spans:
        kept.append(markup[position:begin])
        position = end
    return "".join(kept) + markup[position:]


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


# Attribute values of this many characters and more: inline `data:` images, hydration state (`data-props`), styles.
_LONG_VALUE_CHARS = 1000
# A title's characters a page past the bound keeps (`without_bulk`): the page's text comes after it.
MAX_TITLE_CHARS = 10_000
# A comment; an element whose content is bulk (`_BULK_ELEMENTS`) or kept whole (a title, whose "<!--" is text); a
# start tag holding a "<" (in an attribute: it starts nothing), or long enough to hold a long value (`_VALUE`).
# Other tags are no match, so the scan stays in the regex engine; the possessive runs scan a tag once.
_BULK = re.compile(rf"<!--|<(script|style|textarea|svg|title)(?=[\s/>])[^>]*+>|<[a-zA-Z][^<>]*+<[^>]*+>"
                   rf"|<[a-zA-Z][^>]{{{_LONG_VALUE_CHARS},}}+>", re.IGNORECASE | re.ASCII)
_BULK_ELEMENTS = frozenset(("script", "style", "textarea"))  # raw text; an SVG is bulk too (`_SVG_END`)
# Where an SVG's content ends for the parser: its end tag, or a start tag of HTML that breaks out of foreign
# content (the parser closes the SVG there).
_SVG_END = re.compile(r"</svg[\s/>]|<(?:b|big|blockquote|body|br|center|code|dd|div|dl|dt|em|embed|h[1-6]|head|hr"
                      r"|i|img|li|listing|menu|meta|nobr|ol|p|pre|ruby|s|small|span|strong|strike|sub|sup|table|tt"
                      r"|u|ul|var)[\s/>]", re.IGNORECASE | re.ASCII)


def without_bulk(markup: str, limit: int | None = None) -> str:
    """The markup without what holds no readable text yet can fill megabytes before a page's text begins: comments,
    scripts, styles, form fields' text, inline SVG drawings, and attribute values of a thousand characters and more
    (base64 images, a framework's state as JSON), which become empty. Extraction skips them anyway (an SVG's own text
    aside); cut out first, they no longer push the text past the bound a page is cut to, so it is for pages past
    that bound only. Runs of whitespace become one character, and a title its first MAX_TITLE_CHARS: neither holds
    the page's text either. It passes over titles and over tags to their first ">", so a "<!--" or "<script" within a
    title or an attribute starts nothing (after a ">" within a quoted value it does). Linear in the markup: a tag
    is sought only up to the last ">", where no tag can fail to end, and an SVG's end only until none is found.
    With a `limit`, the first `limit` characters of that, found without going further: 64 MB of tags holding a "<"
    made 16 million strings, 1.2 GB and 30 s a page, of which the first `limit` characters are read.
    """
    kept, size, position, last = [], 0, 0, markup.rfind(">") + 1
    svg_ends = True  # whether a "</svg" may follow

    def keep(piece: str) -> None:
        nonlocal size
        kept.append(piece)
        size += len(piece)

    def keep_squeezed(end: int) -> None:
        """The markup from `position` to `end`, each run of whitespace one character (a line break where it holds
        one), to the limit: a run is sought within the characters still wanted, and followed to its end."""
        at = position
        while at < end and (limit is None or size < limit):
            window = end if limit is None else min(end, at + limit - size + 1)
            run = _WHITESPACE_RUN.search(markup, at, window)
            if run is None:  # up to the window's last whitespace, which may begin a run the next window finds
                cut = window if window == end else at + len(markup[at:window].rstrip(_MARKUP_SPACES))
                cut = cut if cut > at else window
                keep(markup[at:cut])
                at = cut
                continue
            keep(markup[at:run.start()])
            at = _WHITESPACE_REST.match(markup, run.end(), end).end()
            keep("\n" if _LINE_BREAK.search(markup, run.start(), at) else " ")

    while (limit is None or size < limit) and (bulk := _BULK.search(markup, position, last)) is not None:
        keep_squeezed(bulk.start())
        name = (bulk.group(1) or "").lower()
        if bulk.group(0) == "<!--":
            position = _comment_end(markup, bulk.end())
        elif name == "svg" and not bulk.group(0).endswith("/>"):  # self-closed: no content
            # Up to where its content ends (`_SVG_END`; an end tag stays as a stray end tag the parser ignores); an
            # SVG whose content never ends is kept.
            end = _SVG_END.search(markup, bulk.end()) if svg_ends else None
            svg_ends = end is not None
            keep("" if end else bulk.group(0))
            position = end.start() if end else bulk.end()
        elif name in _BULK_ELEMENTS:  # raw text up to its end tag, which stays as a stray end tag
            position = _raw_text_end(markup, name, bulk.end())
        elif name == "title":
            position = _raw_text_end(markup, name, bulk.end())
            keep(markup[bulk.start():min(position, bulk.end() + MAX_TITLE_CHARS)])
        else:  # another start tag, a self-closed SVG too
            tag = bulk.group(0)
            keep(_VALUE.sub(_emptied, tag) if len(tag) > _LONG_VALUE_CHARS else tag)
            position = bulk.end()
    keep_squeezed(len(markup))
    return "".join(kept) if limit is None else "".join(kept)[:limit]


def _emptied(value: re.Match) -> str:
    """An attribute value (`_VALUE`, each scanned once) emptied where it is long."""
    return '=""' if len(value.group(0)) > _LONG_VALUE_CHARS else value.group(0)


def _tokens(markup: str) -> Iterator[str | re.Match]:
    """A page's text (str) and element tags (`_TAG` matches) in order, as the HTML parser reads them: comments,
    doctypes and bogus comments ("</ div>") are passed over, and so is the content of raw-text elements (scripts,
    styles, ...), whose start and end tags come as tags. Linear in the markup: a tag is sought only up to the last
    ">", where none can fail to end."""
    position, last = 0, markup.rfind(">") + 1
    while (tag := _TAG.search(markup, position, last)) is not None:
        if tag.start() > position:
            yield markup[position:tag.start()]
        position = tag.end()
        if tag.group(0) == "<!--":
            position = _comment_end(markup, position)
        elif tag.group(0) in ("<!", "<?", "</"):  # doctype, CDATA, "</ div>": a bogus comment to the next ">"
            end = markup.find(">", position)
            position = len(markup) if end < 0 else end + 1
        else:
            yield tag
            if not tag.group(1) and tag.group(2).lower() in _RAW_TEXT:
                position = _raw_text_end(markup, tag.group(2).lower(), position)
    # After the last ">", a tag begun is one the page ends within (a cut capture): the parser drops it.
    if position < len(markup):
        unfinished = _UNFINISHED_TAG.search(markup, position)
        if (end := unfinished.start() if unfinished else len(markup)) > position:
            yield markup[position:end]


@dataclass(frozen=True)
class TreeShape:
    """What a parser would build of a page, counted without building it (`tree_shape`): how deep its elements nest
    at most, how many elements it reopens (HTML's "active formatting elements"), the most attributes of one element
    (counted where there can be more than MAX_ATTRIBUTES: a start tag of over twice as many characters; a ">" within
    a quoted value ends the tag here, so attributes after it go uncounted) and the most options of one `<select>`."""

    depth: int
    reopened: int
    attributes: int = 0
    options: int = 0


def tree_shape(markup: str) -> TreeShape:
    """A page's `TreeShape`, as the HTML parser's stack of open elements holds it, up to where the depth passes
    MAX_MAIN_DEPTH or the reopened elements MAX_REOPENED (the page's reading is decided there). Void and
    self-closed elements do not open. An end tag closes its element and the ones open inside it, unless the parser
    ignores it: a special element (<div>, <li>, ...) inside the element of an end tag that is no special one, or a
    scope boundary (<table>, <td>, <object>, ...) inside that of a special one's; an ignored end tag hides no
    level, so "<span><div></span>" x N nests 2N deep here as there. Some start tags close an element first, as
    the parser does: a <p> or a block closes an open <p>, an <li> an open <li>, an <option> an <option> on top, a
    <td> or <tr> the open cell or row. A formatting element (<b>, <font>, ...) closed so, outside a table cell, is
    reopened before the next text or inline element, each time, with at most 3 alike kept: so
    "<div><b a=1>...<b a=N></div>" and then M "<div>x</div>" build N x M elements, as do N such elements opened
    in one paragraph before M more. Where the parser would restructure (a misnested </b> around a block), the
    count keeps the levels open, so it errs toward deep. Linear in the markup: about 1 ms for a typical page."""
    stack: list[tuple[str, str]] = []  # (name, tag) of each open element
    at: dict[str, list[int]] = {}  # per name, the stack positions of its open elements
    kept: dict[frozenset, list[int]] = {kind: [] for kind in _KINDS}  # per kind, the positions of such elements
    # Formatting elements closed by another element's end, None where an end tag of their own ended them since; the
    # positions of each name's entries there, so that such an end tag finds its entry at once (a scan of the list,
    # 500 long, for each of a million stray end tags took seconds).
    closed_early: list[tuple[str, str] | None] = []
    early_at: dict[str, list[int]] = {}
    alike: Counter = Counter()  # of closed_early's entries
    deepest = reopened = options = attributes = 0
    options_here = 0  # in the <select> opened last

    def push(entry: tuple[str, str]) -> None:
        nonlocal deepest
        at.setdefault(entry[0], []).append(len(stack))
        for kind, positions in kept.items():
            if entry[0] in kind:
                positions.append(len(stack))
        stack.append(entry)
        deepest = max(deepest, len(stack))

    def close(position: int, clears: bool) -> None:
        """Pop the elements from the top down to `position`; formatting ones above it are closed early."""
        while len(stack) > position:
            entry = stack.pop()
            at[entry[0]].pop()
            for positions in kept.values():
                if positions and positions[-1] == len(stack):
                    positions.pop()
            if len(stack) > position and entry[0] in _FORMATTING and not clears and alike[entry] < 3:
                early_at.setdefault(entry[0], []).append(len(closed_early))
                closed_early.append(entry)
                alike[entry] += 1

    def above(kind: frozenset, position: int) -> bool:
        """Whether an element of `kind` is open inside the one at `position`."""
        return bool(kept[kind]) and kept[kind][-1] > position

    def reopen() -> None:
        nonlocal reopened
        entries = [entry for entry in closed_early if entry is not None]
        reopened += len(entries)
        closed_early.clear()
        early_at.clear()
        alike.clear()
        for entry in entries:
            push(entry)

    for token in _tokens(markup):
        if deepest > MAX_MAIN_DEPTH or reopened > MAX_REOPENED or attributes > MAX_ATTRIBUTES or options > MAX_OPTIONS:
            break
        if isinstance(token, str):
            if closed_early and not token.isspace():
                reopen()
            continue
        closing, name, self_closed = token.groups()
        name = name.lower()
        open_at = at.get(name)
        if closing:
            if not open_at:
                if early_at.get(name):  # its end tag ends the last one to be reopened for it
                    position = early_at[name].pop()
                    alike[closed_early[position]] -= 1
                    closed_early[position] = None
                continue
            target = open_at[-1]
            ignored = (name == "form" or above(_SCOPE, target) if name in _SPECIAL
                       else above(_SPECIAL, target))  # a misnested </b> around a block is kept open too
            if name == "li" and above(_LISTS, target):
                ignored = True
            if not ignored:
                close(target, clears=name in _MARKERS)
            continue
        if len(token.group(0)) > 2 * MAX_ATTRIBUTES:
            attributes = max(attributes, len(_ATTRIBUTE.findall(_VALUE.sub('=""', token.group(0)))))
        if name == "select":
            options_here = 0
        elif name in ("option", "optgroup") and at.get("select"):
            options_here += 1
            options = max(options, options_here)
        if closed_early and name not in _NOT_REOPENING:
            reopen()
        # Start tags that first close an element, as the parser does.
        if name in _CLOSES_P and at.get("p") and not above(_SCOPE, at["p"][-1]):
            close(at["p"][-1], clears=False)
        if name in ("li", "dd", "dt"):
            for sibling in ("li",) if name == "li" else ("dd", "dt"):
                if at.get(sibling) and not above(_SPECIAL_BUT_ADP, at[sibling][-1]):
                    close(at[sibling][-1], clears=False)
        elif name in ("option", "optgroup") and stack and stack[-1][0] == "option":
            close(len(stack) - 1, clears=False)
        elif name in ("td", "th", "tr"):
            for cell in ("td", "th", "tr") if name == "tr" else ("td", "th"):
                if at.get(cell) and not above(_TABLES, at[cell][-1]):
                    close(at[cell][-1], clears=True)
        if name in _RAW_TEXT:
            deepest = max(deepest, len(stack) + 1)
        elif name not in _VOID and not self_closed:
            push((name, token.group(0).lower() if name in _FORMATTING else ""))
    return TreeShape(deepest, reopened, attributes, options)


def tag_text(markup: str) -> str:
    """The text between a page's tags, entities decoded and each block element on lines of its own: how a page
    too hostile for a parser's tree is read, in linear time. Comments and the content of raw-text elements
    (scripts, styles, ...) are left out; other elements' text stays, whatever they are."""
    parts = []
    for token in _tokens(markup):
        if isinstance(token, str):
            parts.append(token)
        else:
            parts.append("\n" if token.group(2).lower() in _BLOCKS else " ")
    return clean_text(unescape("".join(parts)))


def _plain_text(tree: HTMLTree, main_content: bool) -> str:
    # No list bullets: the lxml reader adds none, and the quality model counts symbols.
    return clean_text(extract_plain_text(tree, main_content=main_content, list_bullets=False))


def html_to_text(markup: str) -> str:
    """Return the visible text of an HTML page or fragment, one block per line, whitespace collapsed."""
    # lxml refuses str input that declares an encoding, and characters XML does not allow.
    markup = _XML_INCOMPATIBLE.sub(" ", _XML_DECLARATION.sub("", markup).replace("\x00", ""))
    if not markup.strip():
        return ""
    try:
        root = lxml_html.document_fromstring(markup)
    except (etree.ParserError, ValueError):  # "Document is empty", an XML declaration left unclosed, ...
        return tag_text(markup)
    # In one pass: dropping each alone appends its tail to the text before it, copied again each time (quadratic).
    etree.strip_elements(root, *_INVISIBLE, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    for element in root.iter(*_BLOCKS):
        # lxml refuses what character references made of its text (&#1;) where it is set again.
        element.text = "\n" + _XML_INCOMPATIBLE.sub(" ", element.text or "")
        element.tail = "\n" + _XML_INCOMPATIBLE.sub(" ", element.tail or "")
    return clean_text(root.text_content())
