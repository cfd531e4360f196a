"""How a fetched web page's bytes become text, as browsers decide it (WHATWG HTML's encoding sniffing), and whether
they are a text page at all: ChatNoir's cache endpoint also serves PDFs, images and binary junk."""

from __future__ import annotations

import codecs
import re

import requests
import webencodings
from resiliparse.parse.encoding import detect_encoding

from app.files import bom_encoding

# Content types under these main types that are not binary (`not_text`); anything else under them is a document
# the stages cannot read. A JSON answer is the API's own (`chatnoir.ChatNoirClient.cached_text` refuses it).
_BINARY_TYPES = ("application/", "image/", "audio/", "video/", "font/", "model/")
_TEXT_APPLICATIONS = ("application/xhtml+xml", "application/xml", "application/json")
# Of a page's first bytes, the share of characters no text uses (undecodable, control, private use) above which
# the page is binary. The 536 ClueWeb12 dev pages have none in their first 4 kB, also encoded as windows-1252 and
# read as UTF-8 or Latin-1; random bytes have 55% read as UTF-8, 13% as windows-1252 (how a Latin-1 label reads,
# where nearly every byte is a character), 12-17% after a UTF-16 byte order mark.
_SAMPLE_BYTES = 4096
_MAX_BINARY_SHARE = 0.1
_BINARY_CHARACTERS = re.compile("[\ufffd\x00-\x08\x0e-\x1f\x7f-\x9f\ue000-\uf8ff]")
# The first bytes of files no page is (PDF, PNG, GIF, JPEG, zip, gzip): a PDF opening with its metadata as
# text passed the first bytes' share.
_SIGNATURES = (b"%PDF-", b"\x89PNG", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b")
# A page's text is read up to its first stretch of this many characters over _MAX_BINARY_SHARE undecoded
# (`readable`): U+FFFD and controls, not private use, which icon fonts put in menus.
_TEXT_WINDOW = 1000
_UNDECODED = re.compile("[\ufffd\x00-\x08\x0e-\x1f\x7f-\x9f]")
# How many bytes of a page without a label decide whether it is UTF-8, else what `detect_encoding` reads them as.
_DETECTED_BYTES = 1 << 20
# How far a browser looks for a <meta> charset before it reads the page (HTML's prescan), and what it reads there:
# comments ("<!-->" is one), <meta> tags, their attributes, and a charset within an http-equiv's content.
_PRESCAN_BYTES = 1024
_COMMENT = re.compile(rb"<!--(?:-?>|.*?(?:-->|$))", re.S)
_META = re.compile(rb"<meta[\s/][^>]*", re.I)
_META_ATTRIBUTE = re.compile(rb"""([^\s/>=]+)\s*(?:=\s*("[^"]*"?|'[^']*'?|[^\s>]*))?""")
_CONTENT_CHARSET = re.compile(rb"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I)
# The Python codecs that webencodings (WHATWG Encoding's label table) names for Shift_JIS, EUC-KR, Big5 and GBK, and
# the Windows supersets WHATWG's decoders are: their extra characters are read, not replaced.
_SUPERSETS = {"shift_jis": "cp932", "euc_kr": "cp949", "big5": "big5hkscs", "gbk": "gb18030"}


def page_encoding(response: requests.Response) -> str:
    """How a page's bytes decode, as browsers decide it (WHATWG HTML's encoding sniffing): by its byte order mark,
    else the header's charset, else a `<meta>` charset in its first 1,024 bytes (`_meta_charset`), else UTF-8
    where the bytes are UTF-8, else what a browser's detector finds (requests would assume ISO-8859-1 for text/*
    without a charset). Labels are read as browsers read them (`_codec`); one no browser knows is no answer, and
    the next place is asked, as is a UTF-16 label on bytes without a NUL (UTF-16 markup has one in every other
    byte: a header's "charset=utf-16" on a UTF-8 page read it as CJK nonsense)."""
    content = response.content
    if encoding := bom_encoding(content):
        return encoding
    if "charset" in response.headers.get("Content-Type", "").lower() and response.encoding:
        codec = _codec(response.encoding)
        if codec and not (codec.startswith("utf-16") and b"\x00" not in content[:_SAMPLE_BYTES]):
            return _unless_contradicted(codec, content)
    if (label := _meta_charset(response.content[:_PRESCAN_BYTES])) and (codec := _codec(label)):
        # Bytes read as ASCII cannot be UTF-16 (WHATWG). Bytes that are UTF-8 and not ASCII are read as UTF-8: a
        # page saved as UTF-8 under its old <meta> ("iso-8859-1") read "cafÃ©", where it was read right before.
        if _utf8_text(response.content):
            return "utf-8"
        return _unless_contradicted("utf-8" if codec.startswith("utf-16") else codec, content)
    return _detected(content)


def _unless_contradicted(codec: str, content: bytes) -> str:
    """A label's codec, unless it is UTF-8 and over 5% of the bytes are no UTF-8 (a <meta charset="utf-8"> over
    Shift_JIS, GB18030, windows-1251 or KOI8-R bytes) while the detector's encoding reads them with a tenth as many
    undecoded: such a page was refused as "undecodable bytes", or read up to its first mislabelled paragraph
    (`readable`), where ChatNoir's detector reads it whole. A single-byte label reads every byte, and is believed."""
    sample = content[:_DETECTED_BYTES]
    if codec != "utf-8" or sample.isascii() or _utf8_text(sample):
        return codec
    share = _undecoded_share(sample, codec)
    if share <= 0.05:
        return codec
    detected = _detector_codec(sample)
    return detected if _undecoded_share(sample, detected) < share / 10 else codec


def _undecoded_share(sample: bytes, codec: str) -> float:
    """The share of the characters `sample` decodes to in `codec` that no text has (`_UNDECODED`)."""
    decoded = sample.decode(codec, errors="replace")
    return len(_UNDECODED.findall(decoded)) / max(len(decoded), 1)


def _detected(content: bytes) -> str:
    """UTF-8 where the bytes are, else what Resiliparse's detector reads them as, as ChatNoir reads pages: an
    unlabelled windows-1252 page read as UTF-8 lost its accents and quotes to U+FFFD, and where they were many it
    was refused as "undecodable bytes" (Shift_JIS, GBK too)."""
    sample = content[:_DETECTED_BYTES]
    return "utf-8" if sample.isascii() or _utf8_text(sample) else _detector_codec(sample)


def _detector_codec(sample: bytes) -> str:
    """The codec Resiliparse's detector reads `sample` in (UTF-8 where it names none a browser knows)."""
    detected = detect_encoding(sample)
    # Resiliparse names Python codecs ("euc_jp"), which WHATWG's labels write with a hyphen ("euc-jp").
    return _codec(detected) or _codec(detected.replace("_", "-")) or "utf-8"


def readable(text: str) -> str:
    """A page (decoded, or its text) up to its first stretch of _TEXT_WINDOW characters of which more than a tenth
    are undecoded (`_UNDECODED`: U+FFFD, controls), cut before the word holding that stretch's first such character
    (random bytes read as text hold stray letters too). `not_text` reads a page's first bytes only, and binary
    after them (a PDF opening with its metadata as text, a capture with a binary tail) reached the stages as 20,000
    characters of U+FFFD and stray letters, whose length and text statistics ranked the page above clean copies of
    its own text. Read before the page is cleaned, the controls random bytes give in a single-byte charset
    (Latin-1) count too."""
    for start in range(0, len(text), _TEXT_WINDOW):
        start = max(0, min(start, len(text) - _TEXT_WINDOW))  # the last stretch as long as the others
        window = text[start:start + _TEXT_WINDOW]
        found = _UNDECODED.findall(window)
        if len(found) > _MAX_BINARY_SHARE * len(window):
            head = text[:start + window.index(found[0])]
            if head and not head[-1].isspace():  # without the word it ends in (re's \S*\Z took minutes: quadratic)
                parts = head.rsplit(None, 1)
                head = parts[0] if len(parts) == 2 else ""
            return head.rstrip()
    return text


def _utf8_text(content: bytes) -> bool:
    """Whether bytes are UTF-8 text beyond ASCII (their end may cut a character)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(content, final=False)
    except UnicodeDecodeError:
        return False
    return not content.isascii()


def _codec(label: str) -> str | None:
    """The Python codec of an encoding label as WHATWG Encoding reads it (webencodings: ISO-8859-1 and ASCII as
    windows-1252, x-sjis as Shift_JIS, ...; the Windows supersets its decoders are), None for a label no browser
    knows, though Python may: Python's punycode decoder took minutes on a 2 MB page and held the run (idna,
    unicode_escape, base64_codec: no page's encoding either)."""
    found = webencodings.lookup(label)
    if found is None:
        return None
    codec = _SUPERSETS.get(found.codec_info.name, found.codec_info.name)
    try:
        codecs.lookup(codec)
    except LookupError:  # webencodings' own x-user-defined, which requests cannot decode by name
        return None
    return codec


def _meta_charset(head: bytes) -> str | None:
    """The charset the first `<meta>` that names one names in the first bytes of a page, outside comments: its
    `charset` attribute, or a charset within its `content` where its `http-equiv` is Content-Type, as HTML's
    prescan reads them (a `content` of another meta, "How to fix charset=koi8-r errors", names none)."""
    for tag in _META.finditer(_COMMENT.sub(b"", head)):
        attributes = {}
        for name, value in _META_ATTRIBUTE.findall(tag.group(0), 5):
            attributes.setdefault(name.lower(), value.strip(b"\"'").strip())
        if attributes.get(b"charset"):
            return attributes[b"charset"].decode("ascii", "replace")
        if attributes.get(b"http-equiv", b"").lower() == b"content-type" and \
                (found := _CONTENT_CHARSET.search(attributes.get(b"content", b""))):
            return b"".join(found.groups(b"")).decode("ascii", "replace")
    return None


def not_text(response: requests.Response) -> str | None:
    """What a cache answer is when it is not a text page: its binary content type ("application/pdf"), or
    "undecodable bytes" when more than a tenth of its first bytes are no text's characters in its encoding
    (`page_encoding`), or "a file signature's bytes" where it opens as a PDF, an image or an archive does; None
    for a text page."""
    content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if content_type.startswith(_BINARY_TYPES) and content_type not in _TEXT_APPLICATIONS \
            and not content_type.endswith("+xml"):
        return content_type
    if response.content[:64].lstrip().startswith(_SIGNATURES):
        return "a file signature's bytes"
    try:
        sample = response.content[:_SAMPLE_BYTES].decode(response.encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        sample = response.content[:_SAMPLE_BYTES].decode("utf-8", errors="replace")
    if sample and len(_BINARY_CHARACTERS.findall(sample)) > _MAX_BINARY_SHARE * len(sample):
        return "undecodable bytes"
    return None
