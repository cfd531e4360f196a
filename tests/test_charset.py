"""How a fetched page's bytes are decoded (`app.charset`), as browsers decide it, and when they are no text."""

import random

import pytest
import requests

from app.charset import not_text, page_encoding, readable


def _page(body: bytes, content_type: str) -> requests.Response:
    """A cache answer as the client holds it: its encoding as the fetch sets it (`page_encoding`)."""
    response = requests.Response()
    response._content, response.headers["Content-Type"] = body, content_type
    response.encoding = requests.utils.get_encoding_from_headers(response.headers)
    response.encoding = page_encoding(response)
    return response


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_a_latin1_label_reads_as_windows_1252_and_dense_quotes_are_text(encoding):
    """Browsers read ISO-8859-1 as windows-1252: its quotes are no C1 controls, nor are UTF-8's under that label."""
    body = ("<p>" + "It\u2019s \u201cquoted\u201d \u2014 here. " * 150 + "</p>").encode(encoding)
    response = _page(body, "text/html; charset=ISO-8859-1")
    assert response.encoding == "cp1252" and not_text(response) is None
    assert not_text(_page(random.Random(13).randbytes(4096), "text/html; charset=ISO-8859-1")) == "undecodable bytes"


@pytest.mark.parametrize("label, codec", [
    ("punycode", "utf-8"), ("idna", "utf-8"), ("unicode_escape", "utf-8"), ("base64_codec", "utf-8"),  # no web's
    ("no-such-charset", "utf-8"), ("x-sjis", "cp932"), ("Shift_JIS", "cp932"), ("windows-874", "cp874"),
    ("koi8", "koi8-r"), ("EUC-KR", "cp949"), ("x-mac-cyrillic", "mac-cyrillic"), ("iso-8859-5", "iso8859-5"),
    ("UTF-8", "utf-8"), ("iso-8859-9", "cp1254"), ("latin5", "cp1254"), ("shift-jis", "cp932"), ("gb2312", "gb18030"),
    ("x-user-defined", "utf-8"), ("US-ASCII", "cp1252"),
])
def test_a_charset_label_reads_as_browsers_read_it(label, codec):
    """`charset=punycode` held the run: Python's punycode decoder took minutes for a 2 MB page. WHATWG labels Python
    lacks (x-sjis, windows-874, koi8) read as undecodable; a first table of them left out ISO-8859-9."""
    page = _page("<p>Ѳ café ｶﾀｶﾅ</p>".encode(codec if codec != "utf-8" else "utf-8", "replace"),
                 f"text/html; charset={label}")
    assert page.encoding == codec
    assert not_text(page) is None


@pytest.mark.parametrize("meta, codec", [
    ('<meta charset="windows-1251">', "cp1251"),
    ("<META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=koi8-r'>", "koi8-r"),
    ("<meta charset=shift_jis>", "cp932"), ('<meta charset="utf-16">', "utf-8"), ('<meta charset="punycode">', "utf-8"),
    ('<!-- <meta charset="koi8-r"> --><meta charset="windows-1251">', "cp1251"),
    ('<!--><meta charset="windows-1251">', "cp1251"),
    ('<meta http-equiv=content-type content="text/html,charset=koi8-r">', "koi8-r"),
    (" " * 1024 + '<meta charset="koi8-r">', "utf-8"),  # past the prescan's bytes
    ('<meta name="description" content="How to fix charset=koi8-r errors">', "utf-8"),  # no Content-Type
    ('<meta http-equiv="refresh" content="0;charset=koi8-r">', "utf-8"),
])
def test_a_page_without_a_charset_in_its_header_is_read_by_its_meta_charset(meta, codec):
    """A page whose header names no charset was read as UTF-8 whatever its <meta> said: Cyrillic or Japanese pages
    were "undecodable bytes", a Latin-1 page's accents U+FFFD. Browsers look for the <meta> in its first 1,024 bytes
    (a UTF-16 label there means UTF-8: the bytes were read as ASCII)."""
    text = "Кошки или собаки? Школьная форма." if codec in ("cp1251", "koi8-r") else "ｶﾀｶﾅ 日本語 tea"
    body = f"<html><head>{meta}</head><body><p>{text * 20}</p></body></html>".encode(codec, "replace")
    page = _page(body, "text/html")
    assert page.encoding == codec and not_text(page) is None
    if codec != "utf-8":
        assert text in page.text
    assert _page(body, "text/html; charset=iso-8859-5").encoding == "iso8859-5"  # the header comes first


def test_utf8_bytes_under_an_old_meta_charset_are_read_as_utf8():
    """A page saved as UTF-8 under its old <meta> read "cafÃ©", where it was read right before the prescan."""
    meta = '<meta http-equiv=Content-Type content="text/html; charset=iso-8859-1">'
    utf8 = _page(f"<html><head>{meta}</head><p>Crème brûlée – café</p>".encode(), "text/html")
    latin = _page(f"<html><head>{meta}</head><p>Crème brûlée café</p>".encode("latin-1"), "text/html")
    assert "Crème brûlée – café" in utf8.text and "Crème brûlée café" in latin.text


@pytest.mark.parametrize("text, codec", [("L’énergie nucléaire est préférable à l’éolien. ", "cp1252"),
                                         ("Ядерная энергия лучше. ", "cp1251"), ("原子力発電は太陽光より良い。", "cp932")])
def test_a_page_without_any_label_is_read_as_its_bytes_are_detected(text, codec):
    """No byte order mark, header charset or <meta>: bytes that are no UTF-8 are read by Resiliparse's detector, as
    ChatNoir reads pages (a windows-1252 page read as UTF-8 lost its accents to U+FFFD, a Cyrillic or Japanese one
    was refused as undecodable); UTF-8 and ASCII stay UTF-8."""
    page = _page(f"<html><body><p>{text * 60}</p></body></html>".encode(codec), "text/html")
    assert page.encoding == codec and not_text(page) is None and text in page.text
    assert _page(f"<p>{text * 60}</p>".encode(), "text/html").encoding == "utf-8"
    assert _page(b"<p>" + b"tea " * 300_000 + "caf\u00e9".encode(), "text/html").encoding == "utf-8"  # past 1 MB


@pytest.mark.parametrize("text, codec", [("Ядерная энергия лучше угля. ", "cp1251"),
                                         ("Ядерная энергия лучше. ", "koi8-r"),
                                         ("原子力発電は太陽光より良い。", "cp932"), ("核能比太阳能更可靠。", "gb18030")])
@pytest.mark.parametrize("label", ["header", "meta"])
def test_a_utf8_label_the_bytes_contradict_gives_way_to_the_detector(text, codec, label):
    """A UTF-8 label on bytes of another charset was believed: the page was refused as "undecodable bytes", or
    read up to its first mislabelled paragraph, though the detector names its encoding. A page of a few stray bytes
    and random bytes under the label stay UTF-8 (and the second is no text)."""
    def labelled(body: bytes) -> requests.Response:
        if label == "header":
            return _page(b"<html><body>" + body, "text/html; charset=utf-8")
        return _page(b'<html><head><meta charset="utf-8"></head><body>' + body, "text/html")

    page = labelled(f"<p>{text * 60}</p><p>Nuclear power is reliable.</p>".encode(codec))
    assert page.encoding == codec and not_text(page) is None and text in page.text
    assert labelled("<p>Nuclear power — caf\xe9</p>".encode() * 50 + b"\xe9").encoding == "utf-8"
    random_bytes = labelled(random.Random(13).randbytes(50_000))
    assert random_bytes.encoding == "utf-8" and not_text(random_bytes)


def test_a_utf16_header_on_bytes_without_a_nul_is_not_believed():
    """UTF-16 markup holds a NUL in every other byte: a header's "charset=utf-16" on a UTF-8 page read it as CJK."""
    body = "<p>Nuclear power is reliable \u2014 caf\u00e9.</p>".encode()
    assert _page(body, "text/html; charset=utf-16").encoding == "utf-8"
    assert _page(body.decode().encode("utf-16-le"), "text/html; charset=utf-16le").encoding == "utf-16-le"


@pytest.mark.parametrize("head", [b"%PDF-1.6\n<?xpacket begin=''?>\n" + b"<x:xmpmeta/>" * 400,
                                  b"  \x89PNG\r\n\x1a\n", b"GIF89a" + b"a" * 5000, b"PK\x03\x04" + b"a" * 5000])
def test_a_file_signature_is_no_text_page_whatever_text_follows_it(head):
    """A PDF opening with its XMP metadata as text passed the first 4 kB's share of binary characters."""
    assert not_text(_page(head + random.Random(13).randbytes(50_000), "text/html")) == "a file signature's bytes"
    assert not_text(_page(b"<p>%PDF-1.6 is the version of the file.</p>", "text/html")) is None


def test_a_text_is_read_up_to_its_first_stretch_of_binary_characters():
    """Binary after a page's first bytes reached the stages as thousands of U+FFFD and stray letters, and its length
    ranked the page above clean copies of its own text."""
    clean = "Nuclear energy provides reliable baseload power. " * 100
    junk = random.Random(13).randbytes(20_000).decode("utf-8", "replace")
    assert readable(clean + junk).startswith(clean.rstrip()) and len(readable(clean + junk)) < len(clean) + 1000
    assert readable(junk) == "" and readable(clean) == clean
    sparse = ("A broken \ufffd character here and there. " * 40) + "\ue000 icon " * 10
    assert readable(sparse) == sparse  # a few replaced characters or icons in every line are text
    assert readable(clean + "caf\ufffd") == clean + "caf\ufffd"  # the last stretch is as long as the others
    icons = "".join(f"{chr(0xE000 + i)} Menu " for i in range(150)) + clean  # an icon font's glyphs are text
    assert readable(icons) == icons
    long_word = "x" * 4_000_000  # cut in linear time: re's \S*\Z, tried at each of its characters, took hours
    assert readable(long_word + " a\ufffd" + "\ufffd" * 2000) == long_word


def test_an_unlabelled_page_read_by_a_codec_the_detector_names_in_pythons_words():
    """Resiliparse names "euc_jp", WHATWG's labels "euc-jp": the page fell back to UTF-8 and was refused."""
    text = "原子力発電は太陽光より良い。"
    page = _page(f"<html><body><p>{text * 60}</p></body></html>".encode("euc_jp"), "text/html")
    assert page.encoding == "euc_jp" and text in page.text
