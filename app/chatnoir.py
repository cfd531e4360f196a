"""First-stage retrieval from ClueWeb22-B / ClueWeb12 through the ChatNoir search API.

Built on chatnoir-api 3.4.2's request model (body shape, index names, uuid decoding) but speaking HTTP itself,
because that client's `search` sends `"start"` where the server reads `"from"` (every page repeats page 0),
reads its base URL from module constants, has no timeout on `search_page`, retries neither time-outs nor broken
connections, sends no API key to the cache endpoint and rejects a whole page when one result lacks an optional
field. Here: one `_search` request per topic (depth <= 1000; the next pages where an answer is cut short),
retries on 429, 5xx, time-outs and broken connections through urllib3's `Retry` (exponential backoff, the server's
Retry-After), full texts from the cache endpoint with bounded concurrency and an on-disk cache, and the API key kept
out of every log line, error message, cache file and repr.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import random
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args
from urllib.parse import parse_qs, quote, quote_plus, urljoin, urlsplit
from uuid import NAMESPACE_URL, UUID, uuid5

import requests
from chatnoir_api.model import Index, SearchMethod, decode_uuid, index_id, index_prefix, parse_index
from chatnoir_api.v1.model import Request
from requests.adapters import HTTPAdapter
from tqdm import tqdm
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (ConnectTimeoutError, HTTPError, InvalidHeader, MaxRetryError, NewConnectionError,
                                LocationParseError, ProtocolError, ProxyError, ReadTimeoutError, SSLError)
from urllib3.util import parse_url
from urllib3.util.retry import Retry

from app.charset import not_text, page_encoding, readable
from app.errors import ToucheError, counted
from app.files import atomic_file, bom_encoding, decoded, not_a_file, os_reason, remove_stale_temporaries, small_file
from app.html import PAGE_TEXT, PAGE_TEXTS, html_to_text, read_page, without_bulk
from app.metadata import without_credentials
from app.records import (MAX_TEXT_CHARS, Candidate, Document, Topic, bounded_text, clean_text, record_id,
                         record_score, scores_or_order)
from app.settings import MAX_DEPTH  # a topic's most: asked in one request, paged where answered short

logger = logging.getLogger(__name__)

CREDENTIALS_FILE = "chatnoir-credentials.json"
DEFAULT_BASE_URL = "https://chatnoir.eu/"
DEFAULT_INDEX = "clueweb22/b"
# A page's markup, its bulk cut out, is read up to here: the largest of 536 real ClueWeb12 pages holds 713,201
# characters, and an article after 1.4 MB of menu links was lost at 1,000,000. Read time grows linearly: 3.7 s for 4
# MB of the worst tag soup measured (misnested <b><i>), 0.3 s for 1.7 MB of links.
MAX_PAGE_CHARS = 4_000_000
# Pages read (decoded, parsed) at once, whatever the fetching concurrency: a parsed page's trees take hundreds of MB
# (4 MB of <br>: 462 MB), and 8 fetching threads reading 4.8 MB pages at once took 5.4 GB, each thread's malloc arena
# keeping what its page had taken (so a semaphore alone: 3.2 GB); read in 2 threads, 0.98 GB.
PARSING_THREADS = 2
# A page's text is read up to MAX_TEXT_CHARS (read to 20,000 characters before, an argument after them was read by no
# stage; the web-page dev loop: 0.588 / 0.582 / 0.755 -> 0.585 / 0.594 / 0.766, within its noise).
MAX_CACHED_BYTES = 4 * MAX_TEXT_CHARS + 200  # a cached page text's file: its digest, a newline, the text in UTF-8
_MARKUP_START = re.compile(r"\s*<")
# A run of this many printable ASCII characters without a space is no word of a page's text but an encoded blob, a
# minified script shown as text, a long link or a flood of one character (&amp; repeated): it goes before the text
# is bounded, where 200 kB of base64 before an argument filled the MAX_TEXT_CHARS the stages read and left it unread.
# Not other scripts' characters: Chinese and Japanese are written without spaces.
_JUNK_RUN = re.compile(r"[!-~]{1000,}")
# An answer that names no Content-Type is a page where a tag of a page's elements shows in its first characters,
# though text comes first ("Some text <p>more</p>" kept its tags as words); "If a <b and b <c" is no tag.
_A_TAG = re.compile(r"<(?:!doctype|!--|/?(?:html|head|body|title|meta|link|p|div|span|br|a|b|i|em|strong|ul|ol|li|"
                    r"table|tr|td|th|h[1-6]|script|style|article|section|nav|header|footer|main)\b[^<>]*>)", re.I)
MARKUP_SNIFF_CHARS = 4096
# How a cached page's text was read, in its file's name: raised when pages read otherwise (3: `TEXT_READING` 2, an
# answer without a Content-Type sniffed for tags; 4: `TEXT_READING` 3; 5: `TEXT_READING` 4, cut at binary
# (`charset.readable`), unlabelled pages detected; 6: up to 100,000 characters; 7: `TEXT_READING` 5; 8: `TEXT_READING`
# 6, a UTF-8 label the bytes contradict gives way to the detector, runs of 1,000 characters without a space go), so
# that a kept cache never serves an older reading.
PAGE_READING = 8
MAX_RETRY_AFTER_S = 60.0
# A page's wait at most: pages are many and each may keep its title + snippet; a cache endpoint answering every page
# 429 with Retry-After held a 3-topic run 16 minutes at 60 s.
MAX_PAGE_RETRY_AFTER_S = 10.0
# An answer's body is read up to here, decoded: a page's markup past MAX_PAGE_CHARS loses its bulk first, and
# a gzip bomb (10 MB that decode to 10 GB) or an endless answer from a misbehaving service must not fill the memory.
MAX_BODY_BYTES = 64 << 20
MAX_TIMEOUT_S = 3600.0  # CHATNOIR_TIMEOUT_S at most an hour per answer (inf overflows the clock: an internal error)
MAX_REDIRECTS = 5  # followed where the key may go (`_redirect_target`)
MAX_RETRIES = 10  # CHATNOIR_RETRIES at most: with the backoff, 10 retries of a down service take about 20 minutes
# Then the cache endpoint counts as down: stop asking, keep the snippets. So too once this many pages failed and
# they are half as many as those answered or more: pages that never answer, among others that do, cost their retries
# each (30 s x 5 and backoff), which was hours over a run's 5,000 pages. (Not "as many": a failure is counted after
# its retries, an answer at once, so with 8 pages fetched at a time and every second one failing, the answers stayed
# 8 ahead.)
MAX_DOCUMENT_FAILURES_IN_A_ROW = 20
# So too once the pages that failed took MAX_DOCUMENT_FAILURE_S of fetching (summed over the fetching threads) and
# DOCUMENT_FAILURE_SHARE times what the answered ones took: a page that times out costs a minute where one that
# answers costs a second, so a quarter of the pages never answering (fewer than half, failures counted) held the
# texts of a 5,000-page run for 7 hours. Failing pages thus cost a run at most about 5 times a sound one's fetching.
MAX_DOCUMENT_FAILURE_S = 600.0
DOCUMENT_FAILURE_SHARE = 4.0
MIN_DOCUMENTS_TIMED = 100  # pages answered or failed before the time rule applies: ten slow first pages are no trend
MAX_DOCUMENT_TIMEOUT_RETRIES = 1
# Pages that fail as a ChatNoir restart fails them (its address refusing connections or breaking them off, a 502 or
# 503 from the gateway before it) are asked once more after the others, with those not asked for the failures, once
# ChatNoir answers again: a page answered before, else a search (asked OUTAGE_PAUSE_S after each failed ask, none
# starting past MAX_OUTAGE_S). An outage of 30 s cost 16 of 29 pages their text, and one among thousands of pages every
# page after it (20 failures in a row stop the asking). Their failures are the outage's: the endpoint's own (time-outs,
# a 500 or 504 of one page) keep counting toward giving up, so a half-dead endpoint costs no more than before.
OUTAGE_FAILURES = frozenset(["unreachable", "broken", "HTTP 502", "HTTP 503"])
MALFORMED_HEADERS = "malformed headers"  # an answer's, retried as a body that breaks off is
NOT_ASKED = "not asked, the cache endpoint kept failing"
NOT_TEXT = "not text"  # a page the cache answered with binary data, JSON or undecodable bytes
EMPTY_ANSWER = "empty answer"  # a cache answer of no bytes but whitespace: what the page holds is unknown
NO_TEXT = "page without text"  # a page of markup only (scripts, styles): known to show no text
# A topic whose search fails for good is asked once more after the others, then left out of the run. After this
# many failing in a row, and before the failed topics are asked again, a topic answered before is asked (every
# OUTAGE_PAUSE_S until it is answered): ChatNoir answering no search for MAX_OUTAGE_S is down, and the run stops
# instead of spending every topic's retries. A shorter outage costs no topic (a burst of errors of 45 s failed 3
# topics in a row, each of whose next request would have been answered, and ended the run), nor do queries that
# always fail.
MAX_SEARCH_FAILURES_IN_A_ROW = 3
# Requests for one topic's results at most: a service answering 100 at a time gives a topic its 1,000 in 10.
MAX_SEARCH_PAGES = 10
SEARCH_PATH = "api/v1/_search"  # below the base URL
MAX_OUTAGE_S = 300.0
OUTAGE_PAUSE_S = 10.0
# A result's title and snippet as parsed at most: a title of 160,000 attributes (1.5 MB) held lxml for 220 s. ChatNoir's
# are a few hundred characters.
MAX_PREVIEW_CHARS = 10_000
# A result's document id at most: ClueWeb's are 25 characters, uuids 36. One of 30 MB a topic made a 90 MB run.
MAX_ID_CHARS = 256
# Failures that no other topic's search would escape: the key, the address, the service itself (its headers malformed
# at every retry: they ended the run at once before too, read as an address that cannot be reached).
_SERVICE_FAILURES = frozenset(["HTTP 401", "HTTP 403", "unreachable", "redirected", MALFORMED_HEADERS])
# A title's or snippet's "<" that opens none of the few tags of highlighting and line breaks (<em>, <br>, <p>), each
# with attributes that have values, is the page's own text: read as markup, "Why x<y and ..." lost all after "x",
# and "Is a <b and c> d" all between.
_PAGES_OWN_LESS_THAN = re.compile(r"<(?!/?(?:em|b|strong|i|u|br|p|span)"
                                  r"""(?:\s+[\w:-]+=(?:"[^"<>]*"|'[^'<>]*'|[^\s<>"']+))*\s*/?>)""", re.I)
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")
# What an answer (an error page, a redirect's address) may hold that a terminal obeys or that turns a line around:
# controls (ESC opens an escape sequence: a title set, the screen cleared), bidirectional controls.
_UNPRINTABLE = re.compile("[\\x00-\\x08\\x0e-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]")


@dataclass(frozen=True)
class ChatNoirSettings:
    """How to reach ChatNoir. The API key is excluded from repr, so printing settings cannot leak it."""

    api_key: str = field(repr=False)
    index: str = DEFAULT_INDEX
    base_url: str = field(default=DEFAULT_BASE_URL, repr=False)  # it may hold a password: `address` shows it
    search_method: SearchMethod = "default"
    cache_dir: Path | None = None
    # How a fetched page's text is read (app.html.read_page): Resiliparse's main content, or all visible text.
    page_text: str = PAGE_TEXT
    timeout_s: float = 30.0
    concurrency: int = 8
    retries: int = 4
    backoff_s: float = 1.0

    @property
    def address(self) -> str:
        """The base URL as messages and the run's metadata show it: without a user or password in it (TIRA keeps
        the metadata with the run)."""
        return without_credentials(self.base_url, "***@")  # `http://user:secret@host/` -> `http://***@host/`

    @property
    def page_retries(self) -> int:
        """Retries of a page whose answer does not come or breaks off (MAX_DOCUMENT_TIMEOUT_RETRIES at most)."""
        return min(self.retries, MAX_DOCUMENT_TIMEOUT_RETRIES)

    @classmethod
    def resolve(
        cls,
        input_dir: Path | None,
        index: str | None = None,
        cache_dir: Path | None = None,
        page_text: str = PAGE_TEXT,
    ) -> "ChatNoirSettings":
        """Settings from the input dir's credentials file, then the environment, then defaults.

        Key: the file's `apikey`, else CHATNOIR_API_KEY. Index: `index` (--index), else the file's `index`, else
        clueweb22/b. Base URL: CHATNOIR_BASE_URL. CHATNOIR_TIMEOUT_S and CHATNOIR_RETRIES tune the client.
        """
        credentials = _read_credentials(input_dir) if input_dir is not None else {}
        where = f"{input_dir / CREDENTIALS_FILE}" if input_dir is not None else CREDENTIALS_FILE
        for name in ("apikey", "index"):
            if credentials.get(name) is not None and not isinstance(credentials[name], str):
                raise ToucheError(f"{where}: '{name}' must be a string, not {type(credentials[name]).__name__}")
        api_key = (credentials.get("apikey") or os.environ.get("CHATNOIR_API_KEY") or "").strip()
        if not api_key:
            raise ToucheError(f'no ChatNoir API key: put {{"apikey": "..."}} into {where} or set CHATNOIR_API_KEY')
        base_url = (os.environ.get("CHATNOIR_BASE_URL") or "").strip() or DEFAULT_BASE_URL
        try:
            parts = urlsplit(base_url)
        except ValueError:  # "http://[bad/": an unclosed IPv6 address
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname \
                or any(char.isspace() for char in base_url):
            raise ToucheError(f"CHATNOIR_BASE_URL must be an http(s) URL, got {_shown_address(base_url)!r}")
        if not _port_fits(parts):
            raise ToucheError(f"CHATNOIR_BASE_URL's port must be 1 to 65535, got {_shown_address(base_url)!r}")
        if "?" in base_url or "#" in base_url:  # requests' paths replace it; `?apikey=...` was in ir-metadata.yml
            raise ToucheError(f"CHATNOIR_BASE_URL must be ChatNoir's address without a query or fragment (the key "
                              f"goes into CHATNOIR_API_KEY or {CREDENTIALS_FILE}), got {_shown_address(base_url)!r}")
        return cls(
            api_key=api_key,
            index=_index_name(index or credentials.get("index") or DEFAULT_INDEX),
            base_url=base_url if base_url.endswith("/") else base_url + "/",
            cache_dir=cache_dir,
            page_text=_page_text(page_text),
            timeout_s=_env_number("CHATNOIR_TIMEOUT_S", cls.timeout_s, float, MAX_TIMEOUT_S, positive=True),
            retries=_env_number("CHATNOIR_RETRIES", cls.retries, int, MAX_RETRIES),
        )


def _shown_address(base_url: str) -> str:
    """An address refused as CHATNOIR_BASE_URL as its error quotes it: what may hold a secret masked, a user and
    password (one that does not parse may hide it anywhere before its last "@": "user:pa/ss@host"), then a query
    or fragment (`?apikey=...`)."""
    return re.sub(r"([?#]).*", r"\1***", re.sub(r"(?<=://).*@", "***@", base_url, flags=re.S), flags=re.S)


def has_credentials(input_dir: Path) -> bool:
    """Whether the input dir carries a ChatNoir credentials file (TIRA mounts one for web-corpus tasks); anything
    of that name counts, so that reading it says what is wrong with it."""
    path = Path(input_dir) / CREDENTIALS_FILE
    return os.path.lexists(path)


def _read_credentials(input_dir: Path) -> dict:
    path = Path(input_dir) / CREDENTIALS_FILE
    if not path.is_file():
        if problem := not_a_file(path):  # there, but no file: say so rather than "no API key"
            raise ToucheError(f"{path}: {problem}")
        return {}
    try:
        credentials = json.loads(decoded(path.read_bytes()))
    except RecursionError:
        raise ToucheError(f"{path} is not a credentials file (JSON nested too deep)") from None
    except ValueError as error:  # not JSON, not UTF-8, an integer past Python's 4,300 digits
        # The decoder's message holds only a position, never the file's content.
        raise ToucheError(f"{path} is not valid JSON ({type(error).__name__} at char {getattr(error, 'pos', 0)})")
    if not isinstance(credentials, dict):
        raise ToucheError(f"{path} must hold a JSON object with an 'apikey'")
    return credentials


def _index_name(name: str) -> str:
    """Accept the client's index names ("clueweb22/b") and the wire ids ("cw22"), in any case, spaces around them
    ignored ("CW22 ", as typed into a credentials file)."""
    names = get_args(Index)
    wanted = name.strip().lower()
    if wanted in names:
        return wanted
    try:
        return parse_index(wanted)
    except ValueError:
        choices = ", ".join(f"{known} ({index_id(known)})" if index_id(known) != known else known for known in names)
        raise ToucheError(f"unknown ChatNoir index {name!r}; choose one of: {choices}") from None


def _page_text(name: str) -> str:
    if name not in PAGE_TEXTS:
        raise ToucheError(f"unknown page text {name!r}; choose one of: {', '.join(PAGE_TEXTS)}")
    return name


def _port_fits(parts) -> bool:
    """Whether a URL's port, if any, is a port (urlsplit reads ":99999" and fails only when asked)."""
    try:
        return parts.port is None or parts.port > 0
    except ValueError:
        return False


def _env_number(name: str, default, kind, most: float, positive: bool = False):
    """A number from the environment: `kind` (int or float), not negative (`positive`: above 0), at most `most`."""
    value = os.environ.get(name, "").strip()
    if not value:  # unset or blank
        return default
    try:
        number = kind(value)
    except ValueError:
        raise ToucheError(f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ToucheError(f"{name} must be a finite number, not negative, got {value!r}")
    if number > most or (positive and number == 0):
        raise ToucheError(f"{name} must be {'above' if positive else 'at least'} 0 and at most {most:g}, got {value!r}")
    return number


class ChatNoirRequestError(ToucheError):
    """A ChatNoir request that failed for good; `reason` is a short label ("HTTP 404", "time-out"), `problem` what
    went wrong in words, without the request it befell (for a retry to say again)."""

    def __init__(self, message: str, reason: str, problem: str = ""):
        super().__init__(message)
        self.reason, self.problem = reason, problem or message


@dataclass
class ChatNoirStats:
    """What a retrieval cost: HTTP requests sent (retries included), cache use and snippet fallbacks."""

    topics: int = 0
    search_requests: int = 0
    document_requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    dropped_results: int = 0
    uuid_ids: int = 0  # results without a trec_id, whose uuid stands in
    unscored_topics: int = 0  # topics ranked by ChatNoir's order, their scores unusable
    fallbacks: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str) -> None:
        """Count one event; fetch threads share the stats."""
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def fallback(self, reason: str) -> None:
        """Count one document that keeps title + snippet, by why its text is missing."""
        with self._lock:
            self.fallbacks[reason] += 1

    def forget_fallbacks(self, reasons) -> None:
        """Uncount documents that are asked again (each by its reason)."""
        with self._lock:
            self.fallbacks.subtract(reasons)
            self.fallbacks = +self.fallbacks  # without the reasons counted 0


class _RedactKeys(logging.Filter):
    """Masks API keys in records of loggers that print request URLs (urllib3 logs them at DEBUG, and warns of
    retries and of malformed headers with the URL), as written and as a URL writes them ("a+b/c" is "a%2Bb%2Fc").
    A key is kept for the process's life once a retrieval used it: worker threads still retrying after the
    retrieval ended (a stopped run) must not print it either.

    Also demotes urllib3's own warnings to DEBUG ("Retrying ... after connection broken", "Failed to parse headers
    (url=...)" with its traceback, a page's contradicting lengths): the client logs each failure itself (searches
    as warnings, documents at DEBUG), so a run's log says it once, in its own words.
    """

    def __init__(self):
        super().__init__()
        self.keys: set[str] = set()

    def add(self, key: str) -> None:
        self.keys.update(_key_forms(key))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = _masked(message, sorted(self.keys, key=len, reverse=True))
        if masked != message:
            record.msg, record.args = masked, ()
        if record.levelno >= logging.WARNING and record.name in _DEMOTED_LOGGERS \
                or hasattr(record, "__urllib3-retry-warning"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _key_forms(key: str) -> list[str]:
    """A key as written and as URLs write it (percent escapes in capitals or not), longest first: to be masked."""
    encoded = [quote_plus(key), quote(key, safe="")]
    lowered = [re.sub(r"%[0-9A-F]{2}", lambda escape: escape[0].lower(), form) for form in encoded]
    return sorted({key, *encoded, *lowered}, key=len, reverse=True)


def _masked(text: str, forms) -> str:
    """`text` with each of `forms` (a key's, longest first: `_key_forms`) as ***."""
    for form in forms:
        text = text.replace(form, "***")
    return text


_DEMOTED_LOGGERS = ("urllib3.connection", "urllib3.response")
_URL_LOGGERS = ("urllib3.connectionpool", "urllib3.util.retry", "urllib3.poolmanager", *_DEMOTED_LOGGERS)
_REDACT = _RedactKeys()
for _name in _URL_LOGGERS:
    logging.getLogger(_name).addFilter(_REDACT)
_RETRIED_STATUSES = frozenset([429, *range(500, 600)])


class _Retry(Retry):
    """urllib3's Retry for one kind of ChatNoir request that counts and logs each retry.

    urllib3 derives a new Retry per attempt through `new`, so the request kind, settings and stats travel along.
    """

    # Only the status_forcelist makes a status retryable (urllib3 would also retry a 413 carrying Retry-After).
    RETRY_AFTER_STATUS_CODES = frozenset()

    def __init__(self, *args, what: str = "", settings: ChatNoirSettings | None = None,
                 stats: ChatNoirStats | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.what, self.settings, self.stats = what, settings, stats

    @classmethod
    def policy(cls, what: str, settings: ChatNoirSettings, stats: ChatNoirStats) -> "_Retry":
        return cls(
            total=settings.retries,
            # A page that sent no answer within the time-out is asked once more, not `retries` times: pages are
            # many, each keeps its title + snippet, and one that never answers cost 5 x 30 s and backoff.
            read=settings.page_retries if what == "document" else None,
            allowed_methods=frozenset({"GET", "POST"}),  # a search is a POST, and safe to repeat
            status_forcelist=_RETRIED_STATUSES,
            raise_on_status=False,  # hand back the last answer, so the error names its status
            backoff_factor=settings.backoff_s,
            backoff_jitter=settings.backoff_s,
            what=what, settings=settings, stats=stats,
        )

    def new(self, **kwargs) -> "_Retry":
        return super().new(what=self.what, settings=self.settings, stats=self.stats, **kwargs)

    def get_retry_after(self, response) -> float | None:
        """The server's Retry-After in seconds, at most MAX_RETRY_AFTER_S (a page's MAX_PAGE_RETRY_AFTER_S); None
        when absent or malformed."""
        try:
            seconds = super().get_retry_after(response)
        # Neither seconds nor an HTTP date, or seconds past int()'s 4,300 digits (a ValueError the run took for a
        # redirect to an unreadable address, and ended on): back off instead.
        except (InvalidHeader, ValueError):
            return None
        most = MAX_RETRY_AFTER_S if self.what == "search" else MAX_PAGE_RETRY_AFTER_S
        return None if seconds is None else min(seconds, most)

    def increment(self, *args, **kwargs) -> "_Retry":
        """The Retry of the next attempt; when none is left, the MaxRetryError says how many attempts were made."""
        try:
            return super().increment(*args, **kwargs)
        except MaxRetryError as error:
            error.attempts = len(self.history) + 1
            raise

    def sleep(self, response=None) -> None:
        """Wait before the next attempt (the server's Retry-After, else the backoff), counting and logging it."""
        delay = self.get_retry_after(response) if response is not None else None
        if delay is None:
            delay = self.get_backoff_time()
        last = self.history[-1]
        problem = f"HTTP {last.status}" if last.error is None else _failure(last.error, self.settings)[0]
        left = self.total  # a page's answer that never came has fewer retries (`read`) than the total
        if self.read is not None and last.error is not None and self._is_read_error(last.error):
            left = min(left, self.read)
        _count_retry(self.stats, self.what, problem, len(self.history), left, delay)
        self.stats.add(f"{self.what}_requests")  # urllib3 sends it, not `ChatNoirClient._request`
        time.sleep(delay)


def _count_retry(stats: ChatNoirStats, what: str, problem: str, retry: int, left: int, delay: float) -> None:
    """Log and count one retry, urllib3's (`_Retry.sleep`) or the client's own (`ChatNoirClient._pause`). Searches
    are few and decisive (a warning); document retries are many and summed up in the run's summary."""
    logger.log(logging.WARNING if what == "search" else logging.DEBUG,
               "ChatNoir %s request: %s; retry %d of %d in %.1f s", what, problem, retry, retry + left, delay)
    stats.add("retries")


class _HeadersByDeadline:
    """A connection whose answer's status line and headers must arrive within its (read) timeout in all: urllib3
    bounds each read alone, so a server sending a byte a second would hold the run for ever. At the deadline a
    watchdog shuts the socket down, and the wait ends as a read time-out (retried as one). An HTTPS proxy's answer
    to CONNECT (`_tunnel`, read during the connect, before any `getresponse`) is held to the same deadline: a proxy
    trickling its headers held the run for ever."""

    def _by_deadline(self, call, seconds, sock):
        sock = _plain_socket(sock)
        if not isinstance(seconds, (int, float)) or sock is None:  # no time-out asked for
            return call()
        with _socket_watchdog(sock, seconds) as fired:  # never cut once the headers are in: the body follows
            try:
                result = call()
            except Exception:
                if fired.is_set():
                    raise TimeoutError(f"no status and headers within {seconds:g} s") from None
                raise
        if fired.is_set():  # cut amid the headers (which it can end quietly) or just after: no answer to read
            if hasattr(result, "close"):
                result.close()
            raise TimeoutError(f"no status and headers within {seconds:g} s")
        return result

    def getresponse(self):
        return self._by_deadline(super().getresponse, self.timeout, self.sock)

    def _tunnel(self):
        # The proxy's CONNECT answer, by the connect time-out (urllib3 sets the socket's time-out to it meanwhile).
        return self._by_deadline(super()._tunnel, self.sock.gettimeout() if self.sock else None, self.sock)


class _HTTPConnection(_HeadersByDeadline, HTTPConnection):
    pass


class _HTTPSConnection(_HeadersByDeadline, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class _Adapter(HTTPAdapter):
    """requests' adapter over connections that wait for an answer's headers by a deadline (`_HeadersByDeadline`),
    directly or through an HTTP(S) proxy (a SOCKS proxy keeps its own connections, and urllib3's per-read bound)."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = _POOLS
        return manager


def _result_key(item: object) -> str:
    """What tells a raw search result from another: its ids (JSON of the whole for one without them)."""
    if isinstance(item, dict) and isinstance(trec_id := item.get("trec_id"), str) and trec_id.strip():
        return trec_id.strip()  # as `_hit` names it: one named by trec_id alone, or padded, is the same result
    if isinstance(item, dict) and item.get("uuid"):
        return f"uuid|{item.get('uuid')}"
    return json.dumps(item, sort_keys=True, default=str)


class ChatNoirClient:
    """The two HTTP calls this project needs (`_search`, `cache`) with one retry policy, urllib3's `Retry`.

    Retried: 429, 5xx (504 = server time-out), client time-outs and broken connections, searches (POST) too. The
    wait is the server's Retry-After (at most MAX_RETRY_AFTER_S), else urllib3's backoff: none before the first
    retry, then `backoff_s` x 2, 4, 8, ... plus up to `backoff_s` of jitter. urllib3 retries up to the headers,
    `_answer` an answer whose body breaks off or trickles in. Not retried: 401 (bad key), 403 (IP blocked), other
    4xx. Redirects are followed to the same host or one below it only (`_redirect_target`): the key goes along.
    The status line and headers must arrive within the time-out (`_HeadersByDeadline`), and so must the body after
    them (`_read_body`).
    """

    def __init__(self, settings: ChatNoirSettings, stats: ChatNoirStats):
        self.settings = settings
        self.stats = stats
        self._local = threading.local()
        # Pages are read (decoded, parsed) in PARSING_THREADS threads, whatever the fetching concurrency
        self._reader = ThreadPoolExecutor(max_workers=PARSING_THREADS, thread_name_prefix="chatnoir-read")

    def search(self, query: str, size: int) -> list[dict]:
        """The raw results of `query`'s first `size` hits: one `_search` request, and the next pages where ChatNoir
        answers fewer than asked yet says it found more (a service that caps its answers: 100 of 1,000 were kept,
        silently), up to MAX_SEARCH_PAGES requests. A later page that fails or repeats the first ends the paging
        with a warning; the hits so far are kept."""
        try:
            results, total = self._page(query, 0, size)
        except ChatNoirRequestError as error:
            if error.reason == "HTTP 404" and self.settings.base_url != DEFAULT_BASE_URL:  # every search is, there
                raise ChatNoirRequestError(f"{error} (asked at {urljoin(self.settings.address, SEARCH_PATH)}: "
                                           "CHATNOIR_BASE_URL must be the service's address, which the API's "
                                           "paths follow)", error.reason) from None
            raise
        pages = 1
        known = {_result_key(item) for item in results}  # a result repeated across pages counts once toward `size`
        while results and len(known) < size and total is not None and total > len(results):
            if pages == MAX_SEARCH_PAGES:
                logger.warning("ChatNoir answered %r with %d of the %d results asked in %d pages; the run keeps "
                               "them", query, len(known), min(size, total), pages)
                break
            try:
                more, total = self._page(query, len(results), size - len(known))
            except ChatNoirRequestError as error:
                logger.warning("ChatNoir's page %d for %r: %s; the run keeps the %d results before it", pages + 1,
                               query, error, len(results))
                break
            pages += 1
            if not more or all(_result_key(item) in known for item in more):  # a service that ignores "from"
                if more:
                    logger.warning("ChatNoir answered %r with %d of the %d results asked, and its next page repeats "
                                   "them (it ignores 'from'); the run keeps them", query, len(known),
                                   size if total is None else min(size, total))
                break
            results += more
            known.update(_result_key(item) for item in more)
        return results

    def _page(self, query: str, start: int, size: int) -> tuple[list[dict], int | None]:
        """One `_search` request: its results and the total ChatNoir says it found (None when it does not say)."""
        body = Request(
            apikey=self.settings.api_key,
            query=query,
            index={self.settings.index},
            start=start,
            size=size,
            explain=False,
            minimal=False,
            search_method=self.settings.search_method,
        ).model_dump_json(by_alias=True)  # by_alias: the server reads "from", the client's default dump says "start"
        attempts = _Attempts(self.settings.retries)
        while True:
            response = self._send(
                "search",
                "POST",
                urljoin(self.settings.base_url, SEARCH_PATH),
                data=body.encode("utf-8"),
                headers={"Accept": "application/json", "Content-Type": "text/plain"},
                attempts=attempts,
            )
            payload = _json_answer(response)
            results = payload.get("results") if isinstance(payload, dict) else None
            if isinstance(results, list) or not attempts.left:
                break
            # A gateway's error page or a cut answer says the service is unwell, as a 5xx does: wait and ask again.
            problem = "that is not JSON" if payload is None else "in JSON without a 'results' list"
            self._pause("search", f"HTTP {response.status_code} answer {problem} ({_size(response)})", attempts)
        if payload is None:
            raise ChatNoirRequestError(
                f"ChatNoir answered the search for {query!r} with an HTTP {response.status_code} answer that is not "
                f"JSON ({_size(response)}), the last of {counted(attempts.made, 'attempt')}",
                "malformed JSON",
            )
        if not isinstance(results, list):
            raise ChatNoirRequestError(
                f"ChatNoir answered the search for {query!r} without a 'results' list, the last of "
                f"{counted(attempts.made, 'attempt')}", "malformed JSON"
            )
        meta = payload.get("meta")
        total = meta.get("total_results") if isinstance(meta, dict) else None
        return results, total if isinstance(total, int) and not isinstance(total, bool) else None

    def cached_text(self, uuid: UUID) -> str:
        """The plain text of a document from ChatNoir's cache endpoint, read as `settings.page_text` says."""
        response = self._send(
            "document",
            "GET",
            urljoin(self.settings.base_url, "cache"),
            params={
                "uuid": str(uuid),
                "index": index_id(self.settings.index),
                "raw": "true",
                "plain": "true",
                "apikey": self.settings.api_key,
            },
            attempts=_Attempts(self.settings.page_retries),
        )
        if not response.content.strip():
            raise ChatNoirRequestError(f"ChatNoir's cache answered {uuid} with no page", EMPTY_ANSWER)
        response.encoding = page_encoding(response)
        if binary := not_text(response):
            raise ChatNoirRequestError(f"ChatNoir's cache answered {uuid} with {binary}, not a text page", NOT_TEXT)
        content_type = response.headers.get("Content-Type", "").lower()
        if content_type.startswith("application/json"):  # the API's own answer ({"error": ...}), not a page
            raise ChatNoirRequestError(f"ChatNoir's cache answered {uuid} with JSON "
                                       f"({self._excerpt(response.text[:1000])}), not a page", NOT_TEXT)
        return self._reader.submit(self._page_text, uuid, response, content_type).result()

    def _page_text(self, uuid: UUID, response: requests.Response, content_type: str) -> str:
        """The text of a page ChatNoir's cache answered with, its bytes decoded (`response.encoding`)."""
        # Markup is mostly tags and scripts, so the page gets a larger bound than its text before it is parsed. A
        # longer page first loses, all of its MAX_BODY_BYTES, what holds no text (scripts, inline images, long
        # attribute values): megabytes of it cannot push the text past the bound (0.6 s for 64 MB of tags).
        page = readable(decoded := response.text)  # before cleaning: the controls of junk in Latin-1 count
        if "html" not in content_type and not _MARKUP_START.match(page) and (
                content_type or not _A_TAG.search(page, 0, MARKUP_SNIFF_CHARS)):
            text = clean_text(page[:MAX_PAGE_CHARS])
        else:
            text = read_page(without_bulk(page, MAX_PAGE_CHARS) if len(page) > MAX_PAGE_CHARS else page,
                             self.settings.page_text)
        read = readable(_JUNK_RUN.sub(" ", text))  # markup may hold a text's junk apart
        if not read and (text or page != decoded):  # nothing readable but what binary bytes left
            raise ChatNoirRequestError(f"ChatNoir's cache answered {uuid} with a text of undecodable bytes",
                                       NOT_TEXT)
        return read

    def _pause(self, what: str, problem: str, attempts: "_Attempts") -> None:
        """Wait before retrying a request whose answer was unusable, with urllib3's backoff (none before the first
        retry, then `backoff_s` x 2, 4, ... plus jitter), counted and logged as _Retry does."""
        settings = self.settings
        retry = attempts.take()
        delay = 0.0 if retry == 1 else min(settings.backoff_s * 2 ** (retry - 1), Retry.DEFAULT_BACKOFF_MAX) \
            + random.uniform(0, settings.backoff_s)
        _count_retry(self.stats, what, problem, retry, attempts.left, delay)
        time.sleep(delay)

    def _send(self, what: str, method: str, url: str, attempts: "_Attempts", **kwargs) -> requests.Response:
        """The answer to a request, its body read; a redirect is followed only where `_redirect_target` trusts it
        (method and body kept), anything but a 2xx is a ChatNoirRequestError."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._answer(what, method, url, attempts, **kwargs)
            if not response.is_redirect:
                break
            url = _redirect_target(url, response, self.settings, what)
            if query := urlsplit(url).query:  # the address names the whole request, but for the key maybe
                key = (kwargs.pop("params", None) or {}).get("apikey")
                # a host trusted with the key: without it, 403 "blocked this IP"; an empty apikey= there is replaced
                if key and not any(parse_qs(query).get("apikey", [])):
                    kept = [pair for pair in query.split("&") if pair.split("=", 1)[0] != "apikey"]
                    url = urlsplit(url)._replace(query="&".join(kept)).geturl()
                    kwargs["params"] = {"apikey": key}
        else:
            raise ChatNoirRequestError(f"ChatNoir's address redirects more than {MAX_REDIRECTS} times", "redirected")
        status = response.status_code
        if status == 401:
            raise ChatNoirRequestError("ChatNoir rejected the API key (HTTP 401): check the apikey", "HTTP 401")
        if status == 403:
            raise ChatNoirRequestError("ChatNoir blocked this IP address (HTTP 403)", "HTTP 403")
        if status == 407:
            raise ChatNoirRequestError("the HTTP proxy asks for credentials (HTTP 407): check HTTPS_PROXY / "
                                       "HTTP_PROXY", "unreachable")
        if status in _RETRIED_STATUSES:  # urllib3 hands back the last answer once the retries are spent
            retries = getattr(response.raw, "retries", None)
            made = len(retries.history) + 1 if isinstance(retries, Retry) else self.settings.retries + 1
            raise ChatNoirRequestError(
                f"ChatNoir {what} request failed after {counted(made, 'attempt')}: HTTP {status}", f"HTTP {status}")
        if not response.ok:
            raise ChatNoirRequestError(
                f"ChatNoir {what} request failed with HTTP {status}: {self._excerpt(response.text)}",
                f"HTTP {status}",
            )
        return response

    def _answer(self, what: str, method: str, url: str, attempts: "_Attempts", **kwargs) -> requests.Response:
        """One request's answer with its body read, retried while the body breaks off or trickles in, or the headers
        are malformed."""
        settings = self.settings
        while True:
            try:
                response = self._request(what, method, url, **kwargs)
            except ChatNoirRequestError as error:  # urllib3 retries no malformed headers: one cost the search
                if error.reason != MALFORMED_HEADERS:
                    raise
                problem, reason = error.problem, MALFORMED_HEADERS
            else:
                try:  # urllib3 retries what fails before the answer; a body that breaks off or trickles, here
                    _read_body(response, time.monotonic() + settings.timeout_s)
                    return response
                except (_BodyTimeout, HTTPError) as error:
                    problem = (f"the answer did not arrive within {settings.timeout_s:g} s" if isinstance(
                        error, _BodyTimeout) else f"the answer broke off ({type(error).__name__})")
                    reason = "cut answer"
            if not attempts.left:
                made = f" after {counted(attempts.made, 'attempt')}" if attempts.made > 1 else ""
                raise ChatNoirRequestError(f"ChatNoir {what} request failed{made}: {problem}", reason)
            self._pause(what, problem, attempts)

    def _request(self, what: str, method: str, url: str, **kwargs) -> requests.Response:
        """The answer's status and headers (urllib3 retrying by `_Retry`); its body is still to be read."""
        settings = self.settings
        self.stats.add(f"{what}_requests")  # each retry counts its own request (_Retry.sleep)
        try:
            # Redirects are `_send`'s to follow or refuse: requests' would take the key anywhere and turn a POST
            # answered by a 301 into a GET.
            return self._session(what).request(method, url, timeout=settings.timeout_s, stream=True,
                                               allow_redirects=False, **kwargs)
        except requests.RequestException as error:
            cause = error.args[0] if error.args and isinstance(error.args[0], BaseException) else error
            retried = isinstance(cause, MaxRetryError)
            problem, reason = _failure(cause.reason if retried else cause, settings)
            made = getattr(cause, "attempts", settings.retries + 1)  # `_Retry.increment` counts them
            attempts = f" after {counted(made, 'attempt')}" if retried else ""
            # from None: the chained errors quote the URL, and with it the key, in a --debug traceback.
            raise ChatNoirRequestError(f"ChatNoir {what} request failed{attempts}: {problem}", reason,
                                       problem) from None
        except ValueError:  # requests reads a redirect's address even when not following it: "http://[bad/"
            raise ChatNoirRequestError("ChatNoir's address redirects to an unreadable address", "redirected") from None

    def _session(self, what: str) -> requests.Session:
        """One session per thread and request kind: connection reuse without sharing a Session across threads, and
        a retry policy that knows which kind it counts."""
        session = getattr(self._local, what, None)
        if session is None:
            session = requests.Session()
            adapter = _Adapter(max_retries=_Retry.policy(what, self.settings, self.stats))
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            setattr(self._local, what, session)
        return session

    def _excerpt(self, text: str) -> str:
        """An answer's first words, the key masked however the answer quotes it (a gateway page echoing the URL)."""
        masked = _masked(text, _key_forms(self.settings.api_key)) if self.settings.api_key else text
        return " ".join(_UNPRINTABLE.sub("", masked).split())[:200]


class _Attempts:
    """The retries one request may still take, shared by the loops that retry its unusable answers (a body that
    breaks off, a search answer that is no JSON): each loop counting its own multiplied them (a search with 4
    retries could be sent 25 times, each with urllib3's own retries)."""

    def __init__(self, retries: int):
        self.left, self.made = retries, 1

    def take(self) -> int:
        """Use one retry; its number (1 for the first)."""
        self.left, self.made = self.left - 1, self.made + 1
        return self.made - 1


def _redirect_target(url: str, response: requests.Response, settings: ChatNoirSettings, what: str) -> str:
    """Where a redirect leads, when the key may follow it: the same host or one below it (chatnoir.eu to
    webcontent.chatnoir.eu), never from https to http. Else a ChatNoirRequestError saying where it points (without
    its query or credentials, which may hold the key) and, for a search that keeps its path below the base URL,
    the base URL to set instead (a page's redirect says nothing of where searches go: that advice broke them)."""
    status = response.status_code
    try:
        target = urljoin(url, response.headers["Location"])
        parts, origin = urlsplit(target), urlsplit(url)
        host, port = parts.hostname, parts.port
        # the origin as the target is read below (an IDNA host: bücher.example is xn--bcher-kva.example to urllib3)
        origin_host = (parse_url(url).host or "").strip("[]").lower() or origin.hostname
        # The host requests will connect to is urllib3's reading of the address, which differs from urlsplit's
        # where it holds a backslash ("http://evil.example\\@chatnoir.eu/": urlsplit reads chatnoir.eu, urllib3
        # evil.example, and the key went there): where they disagree, the address is not followed.
        sent = parse_url(target)
        if (sent.host or "").strip("[]").lower() != (host or "") or (sent.port or None) != port:
            host, port = (sent.host or "").strip("[]").lower() or None, sent.port
    except (ValueError, LocationParseError):  # "http://[bad/"
        raise ChatNoirRequestError(f"ChatNoir's address redirects (HTTP {status}) to an unreadable address",
                                   "redirected") from None
    if host and origin_host and (host == origin_host or host.endswith("." + origin_host)) \
            and parts.scheme in ("http", "https") and not (origin.scheme == "https" and parts.scheme == "http"):
        return target
    shown = f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}"
    if settings.api_key:  # a path may hold the key in any of the forms URLs write it
        shown = _masked(shown, _key_forms(settings.api_key))
    shown = _UNPRINTABLE.sub("", shown)
    below = url[len(settings.base_url):]  # "api/v1/_search", "cache"
    advice = ""
    if what == "search" and shown.endswith(below) and shown[:len(shown) - len(below)] != settings.base_url:
        advice = f": set CHATNOIR_BASE_URL to {shown[:len(shown) - len(below)]}"
    raise ChatNoirRequestError(f"ChatNoir's address redirects (HTTP {status}) to {shown}{advice} (a redirect to "
                               "another host is not followed, for the key's sake)", "redirected")


def _size(response: requests.Response) -> str:
    """An answer's length in words; one cut at MAX_BODY_BYTES (an endless or gzip-bombed body) says so."""
    size = len(response.content)
    return f"cut at {MAX_BODY_BYTES >> 20} MB, the most read" if size >= MAX_BODY_BYTES else counted(size, "byte")


def _json_answer(response: requests.Response) -> object | None:
    """The answer's JSON, None when it is not JSON (an HTML error page, a cut body, nesting too deep to parse).
    A byte order mark decodes the rest (RFC 8259 lets a reader ignore it; requests' `.json()` chokes on it)."""
    try:
        if encoding := bom_encoding(response.content):
            return json.loads(response.content.decode(encoding, "replace"))
        return response.json()
    except (ValueError, RecursionError):
        return None


class _BodyTimeout(Exception):
    """An answer's body still arriving at its deadline."""


def _plain_socket(sock: object) -> socket.socket | None:
    """The OS socket under a connection's: urllib3's SSLTransport (TLS in TLS, through an https:// proxy) is no
    socket.socket but wraps one (`.socket`)."""
    for _ in range(3):
        if isinstance(sock, socket.socket) or sock is None:
            return sock
        sock = getattr(sock, "socket", None)
    return None


@contextmanager
def _socket_watchdog(sock: socket.socket | None, seconds: float) -> Iterator[threading.Event]:
    """Within the block, a watchdog that shuts `sock` down after `seconds` (a read it cuts ends as the socket's end
    or an error); yields the event it sets when it does. It never fires once the block is over: the socket may then
    be back in the pool, or in the next request. Without a socket nothing is watched."""
    lock, fired, done = threading.Lock(), threading.Event(), threading.Event()

    def cut() -> None:
        with lock:
            if done.is_set():
                return
            fired.set()
        try:  # the plain socket's shutdown: a TLS socket's own would also drop its state under the reader
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:  # closed meanwhile
            pass

    watchdog = None
    if sock is not None:
        watchdog = threading.Timer(max(0.0, seconds), cut)
        watchdog.daemon = True
        watchdog.start()
    try:
        yield fired
    finally:
        with lock:
            done.set()
        if watchdog is not None:
            watchdog.cancel()


def _socket_of(response: requests.Response) -> socket.socket | None:
    """The socket an answer's body is read from: its connection's, or (an answer that closes the connection:
    http.client hands the socket to the answer and forgets it) the answer's own file's."""
    sock = _plain_socket(getattr(getattr(response.raw, "connection", None), "sock", None))
    if sock is None:  # http.client's HTTPResponse.fp: a BufferedReader over a SocketIO
        sock = _plain_socket(getattr(getattr(getattr(getattr(response.raw, "_fp", None), "fp", None), "raw", None),
                                     "_sock", None))
    return sock


def _read_body(response: requests.Response, deadline: float) -> None:
    """Read a streamed answer's body by its deadline: requests' timeout bounds each read, so a server sending a
    byte every second would otherwise hold the run for ever. Each `read1` returns what has arrived (chunked and
    gzipped bodies decoded as requests decodes them); `response.content` holds the body afterwards, its first
    MAX_BODY_BYTES (a cut search answer is malformed JSON; a cut page is read as far as it goes). A watchdog shuts
    the socket down at the deadline: `read1` keeps reading while what arrives decodes to nothing (empty deflate
    blocks, a gzip header's endless file name), so the deadline checked between reads never came."""
    chunks, size = [], 0
    try:  # the watchdog done before the answer closes: its connection may then go back to the pool
        with _socket_watchdog(_socket_of(response), deadline - time.monotonic()) as fired:
            try:  # urllib3's HTTPError (a read time-out, a connection cut mid-body) goes to the caller
                while size < MAX_BODY_BYTES and (chunk := response.raw.read1(1 << 16, decode_content=True)):
                    chunks.append(chunk)
                    size += len(chunk)
                    if time.monotonic() > deadline:
                        raise _BodyTimeout()
            except (HTTPError, OSError):
                if fired.is_set():
                    raise _BodyTimeout() from None
                raise
    finally:
        response.close()
    if fired.is_set():  # the shut socket read as the body's end
        raise _BodyTimeout()
    response._content = b"".join(chunks)[:MAX_BODY_BYTES]  # where requests keeps a body it has read


def _failure(error: BaseException, settings: ChatNoirSettings) -> tuple[str, str]:
    """An attempt that got no answer: what went wrong, in words and as a short label."""
    if isinstance(error, ProxyError):  # the proxy's failure, whatever its cause: not ChatNoir's address
        return "cannot reach ChatNoir through the HTTP proxy (HTTPS_PROXY / HTTP_PROXY)", "unreachable"
    if isinstance(error, (ReadTimeoutError, ConnectTimeoutError, TimeoutError)) and not isinstance(
        error, NewConnectionError  # urllib3 files a refused connection under connect time-outs
    ):
        return f"no answer within {settings.timeout_s:g} s", "time-out"
    if isinstance(error, SSLError):  # a failed TLS handshake: its usual causes, in words
        return (f"no TLS connection to {settings.address} (SSLError: a certificate that cannot be verified, or "
                "a server that speaks no https)"), "unreachable"
    # These errors' messages can quote the URL and with it the key: report the class only.
    if isinstance(error, ProtocolError):  # reached, then the connection broke off (before or during the answer)
        return f"the connection to {settings.address} broke off ({type(error).__name__})", "broken"
    if isinstance(error, InvalidHeader):  # reached: two Content-Lengths that differ (it read "cannot reach")
        return f"{settings.address} answered with malformed headers ({type(error).__name__})", MALFORMED_HEADERS
    return f"cannot reach {settings.address} ({type(error).__name__})", "unreachable"


@dataclass(frozen=True)
class Hit:
    """One usable search result: the run's document id, the uuid the cache endpoint wants, score and preview."""

    doc_id: str
    uuid: UUID
    score: float | None  # None: no finite number
    preview: str


class TextCache:
    """Document texts on disk, one UTF-8 file per document id, so an interrupted run resumes without re-fetching.
    Keyed by the service (its address: a stand-in serving other pages under the same ids shares none), by index
    and by how the page was read (`page_text`): runs that read pages differently share no texts.

    Files are written atomically (temp file, then rename): a killed run leaves whole files or none. Each opens with
    its text's digest, so a file damaged later (emptied, cut, overwritten) is fetched again, never read as the
    page. A cache that cannot take a file (read-only, full) costs the caching, not the text.
    """

    def __init__(self, directory: Path, index: str, page_text: str = PAGE_TEXT, base_url: str = DEFAULT_BASE_URL):
        self.directory = Path(directory) / _service_name(base_url) / index_id(index) / page_text
        self.damaged = 0  # files found damaged (then fetched again)
        self.unwritable: str | None = None  # why the cache took no more files, once one failed
        self._lock = threading.Lock()
        if self.directory.is_dir():  # a run killed while writing (SIGKILL) left its temporaries there for good
            remove_stale_temporaries(self.directory)

    def get(self, doc_id: str) -> str | None:
        """The cached text, or None when there is none or its file is damaged: no regular file (a FIFO held the run
        for ever, a link to /dev/zero filled the memory), longer than a text with its digest can be, or not its
        text's."""
        path = self._path(doc_id)
        if not os.path.lexists(path):
            return None
        try:
            header, _, text = small_file(path, MAX_CACHED_BYTES).decode("utf-8").partition("\n")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError):  # ValueError: no regular file, too long, no UTF-8
            header, text = "", ""
        if header != _digest(text):
            with self._lock:
                self.damaged += 1
            return None
        return text

    def put(self, doc_id: str, text: str) -> None:
        if self.unwritable:
            return
        path = self._path(doc_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(path) as out:
                out.write(f"{_digest(text)}\n{text}")
        except IsADirectoryError:  # this text's name holds a directory: this text alone goes uncached
            return
        except OSError as error:
            with self._lock:
                if not self.unwritable:
                    self.unwritable = os_reason(error)
                    logger.warning("cannot cache page texts in %s (%s); the run goes on without caching them",
                                   self.directory, self.unwritable)

    def _path(self, doc_id: str) -> Path:
        """The file of a document's text, named by how it was read (`PAGE_READING`; with its digest since 2): the
        files of caches from before are not read."""
        name = doc_id if _SAFE_ID.fullmatch(doc_id) else hashlib.sha1(doc_id.encode("utf-8")).hexdigest()
        return self.directory / f"{name}.v{PAGE_READING}.txt"


def _service_name(base_url: str) -> str:
    """A folder name for a ChatNoir address: its host, port and path (never a user or password in it) as letters,
    digits, dots and dashes, and their digest."""
    parts = urlsplit(base_url)
    address = f"{parts.hostname or ''}_{parts.port or ''}_{parts.path}"
    readable = re.sub(r"[^A-Za-z0-9.-]+", "_", address).strip("._") or "chatnoir"
    # the readable part may lose what tells addresses apart (an IPv6 host's colons): the address's digest keeps it
    return f"{readable}-{hashlib.sha256(address.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class _Outage:
    """The topics whose searches failed since the last search answered, and since when none was."""

    def __init__(self):
        self.failing: set[str] = set()
        self.since = time.monotonic()

    @property
    def ongoing(self) -> bool:
        return len(self.failing) >= MAX_SEARCH_FAILURES_IN_A_ROW

    def answered(self) -> None:
        self.failing, self.since = set(), time.monotonic()

    def failed(self, topic: Topic) -> None:
        self.failing.add(topic.number)

    @property
    def silent_s(self) -> float:
        return time.monotonic() - self.since


def _verdict(error: ChatNoirRequestError) -> str:
    """Why searches stopped being answered, as the last one's failure tells: a 429 to every search for minutes is a
    quota spent (a Retry-After of a day was reported as ChatNoir being down), anything else an outage, or, where the
    answers were no search results or came too late, a wrong address or a time-out too short for the service."""
    if error.reason == "HTTP 429":
        return ("ChatNoir refuses more searches as too many requests: this API key's quota may be spent; run again "
                "later, or ask ChatNoir's team for more")
    if error.reason == "malformed JSON":  # answered, but not with search results: a gateway's page, another service
        return ("ChatNoir seems down, or what answers at its address (CHATNOIR_BASE_URL) is not ChatNoir's search "
                "API")
    if error.reason == "time-out":
        return "ChatNoir seems down, or slower than CHATNOIR_TIMEOUT_S allows"
    return "ChatNoir seems down"


def _document(hit: Hit, text: str | None) -> Document:
    """A hit's document: its page's text; a page not fetched (None: a failed fetch, an empty answer) is stood in for
    by its title and snippet, its length and text statistics unknown (`Document.stand_in`); a page of markup without
    text ("": scripts, styles) is read as what it shows, its title and snippet. It was stood in for, and so took the
    median length and quality of the pages read, and ranked above pages holding a whole argument."""
    if text is None:
        return Document(hit.doc_id, hit.preview, stand_in=True)
    return Document(hit.doc_id, text or hit.preview)

class ChatNoirBackend:
    """Retrieves candidates for topics from a ChatNoir index, with full texts for the rerank and stance stages."""

    def __init__(self, settings: ChatNoirSettings):
        self.settings = settings
        self.stats = ChatNoirStats()
        self.client = ChatNoirClient(settings, self.stats)
        self.cache = (TextCache(settings.cache_dir, settings.index, settings.page_text, settings.base_url)
                      if settings.cache_dir is not None else None)
        self._failures_in_a_row = self._failures = self._answers = 0
        self._failed_s = self._answered_s = 0.0  # seconds of fetching the failed / answered pages took
        self._outage_pages: dict[str, str] = {}  # doc id -> why: pages to ask again after an outage
        # Of the failures above (in all, in the last row, their seconds), the outage's.
        self._outage_failures = self._outage_in_a_row = 0
        self._outage_failed_s = 0.0
        self._answered_page: UUID | None = None  # a page the cache endpoint answered: asked to see it answer again
        self._failures_lock = threading.Lock()
        self._stopped = threading.Event()
        self._redirect_said = threading.Event()  # a redirected page is said once, in words

    def retrieve(self, topics: list[Topic], depth: int, text_depth: int | None = None) -> dict[str, list[Candidate]]:
        """Search every topic's title (one request each, more where an answer is cut short), then fetch the texts
        of its top `text_depth` hits.

        Candidates keep ChatNoir's order and score (its order where a score is no finite number); doc ids are
        ChatNoir's trec_id (uuid where an index has none). Documents below `text_depth` (all when None), or whose
        text cannot be fetched, carry title + snippet. A topic whose search fails for good (its retries spent) is
        asked again after the others, then left out with an error line: one topic's trouble costs that topic.
        Raises ToucheError when the service fails as a whole: a rejected key, an address that cannot be reached, an
        outage (`_Outage`), or every topic.
        """
        if not 1 <= depth <= MAX_DEPTH:
            raise ToucheError(f"ChatNoir depth must be between 1 and {MAX_DEPTH}, got {depth}")
        started = time.perf_counter()
        if self.settings.api_key:
            _REDACT.add(self.settings.api_key)
        hits = self._search_all(topics, depth)
        texts = self._texts(hits, text_depth, next((topic.title for topic in topics if topic.number in hits), ""))
        candidates = {
            qid: [Candidate(qid, _document(hit, texts.get(hit.doc_id)), hit.score) for hit in topic_hits]
            for qid, topic_hits in hits.items()
        }
        self.stats.topics = len(hits)
        self.stats.seconds = time.perf_counter() - started
        self._log_summary()
        return candidates

    def _search_all(self, topics: list[Topic], depth: int) -> dict[str, list[Hit]]:
        """Each topic's hits, in the topics' order, without the topics whose search failed twice (see `retrieve`)."""
        hits: dict[str, list[Hit]] = {}
        outage = _Outage()
        failed = []
        for topic in topics:
            if (error := self._ask(topic, depth, hits, outage)) is not None:
                logger.warning("topic %s: %s; asked again after the other topics", topic.number, error)
                failed.append(topic)
                if outage.ongoing and hits:  # ChatNoir down, or out for a while, or these queries failing for good
                    self._await_service(topics, hits, outage)
                elif outage.ongoing and outage.silent_s >= MAX_OUTAGE_S:  # none answered yet: the failures alone
                    raise ToucheError(f"topic {topic.number}: {error} (the searches of the first "
                                      f"{len(outage.failing)} topics failed, none answered for "
                                      f"{outage.silent_s:.0f} s: {_verdict(error)})") from None
        if failed and hits:  # before asking them again: an outage over the last topics would cost them
            self._await_service(topics, hits, outage)
        left = [(topic, error) for topic in failed if (error := self._ask(topic, depth, hits)) is not None]
        if left and not hits:
            topic, error = left[0]
            raise ToucheError(f"topic {topic.number}: {error} (no topic's search succeeded)")
        for topic, error in left:
            logger.error("topic %s: %s; the run goes on without it", topic.number, error)
        return {topic.number: hits[topic.number] for topic in topics if topic.number in hits}

    def _await_service(self, topics: list[Topic], hits: dict[str, list[Hit]], outage: _Outage) -> None:
        """Ask a topic answered before until it is answered; where it is not, again every OUTAGE_PAUSE_S, and once no
        search has been answered for MAX_OUTAGE_S, end the retrieval: ChatNoir is down. Asking the failed topics
        instead could not tell an outage from queries that always fail (three that always time out took 8 minutes
        and ended a run ChatNoir was answering)."""
        canary = next(topic for topic in topics if topic.number in hits)
        said = False
        while True:
            try:
                self.client.search(canary.title, 1)  # one result: the answer, not the hits, is wanted
            except ChatNoirRequestError as error:
                self._give_up_on_service(canary, error, answered=True)
                if outage.silent_s >= MAX_OUTAGE_S:
                    raise ToucheError(f"topic {canary.number}: {error} (no search answered for "
                                      f"{outage.silent_s:.0f} s, {len(outage.failing | {canary.number})} topics' "
                                      f"searches failing: {_verdict(error)})") from None
                if not said:
                    logger.warning("ChatNoir answered none of the last searches: asking topic %s again every %g s "
                                   "until it is answered, or no search has been for %g s", canary.number,
                                   OUTAGE_PAUSE_S, MAX_OUTAGE_S)
                    said = True
                time.sleep(OUTAGE_PAUSE_S)
                continue
            outage.answered()
            return

    @staticmethod
    def _give_up_on_service(topic: Topic, error: ChatNoirRequestError, answered: bool) -> None:
        """A failure no other topic's search would escape ends the retrieval at once. An address that cannot be
        reached once a search was `answered` there is an outage instead (ChatNoir restarting): waited for as one."""
        if error.reason in _SERVICE_FAILURES and not (answered and error.reason == "unreachable"):
            raise ToucheError(f"topic {topic.number}: {error}") from None

    def _ask(self, topic: Topic, depth: int, hits: dict[str, list[Hit]],
             outage: _Outage | None = None) -> ChatNoirRequestError | None:
        """Search one topic into `hits`; the error, when its search failed for good (counted in `outage`)."""
        try:
            hits[topic.number] = self._search(topic, depth)
        except ChatNoirRequestError as error:
            self._give_up_on_service(topic, error, answered=bool(hits))
            if outage is not None:
                outage.failed(topic)
            return error
        if outage is not None:
            outage.answered()
        return None

    def _search(self, topic: Topic, depth: int) -> list[Hit]:
        results = self.client.search(topic.title, depth)
        hits: list[Hit] = []
        ids, uuids = set(), {}  # a run must not list a document twice for a topic
        for raw in results:  # to `depth` distinct hits: a result repeated across pages of results costs no depth
            if len(hits) == depth:
                break
            hit = self._hit(raw)
            if hit is None:
                self.stats.dropped_results += 1
            elif hit.uuid in uuids:  # one result may name it by uuid alone, another by trec_id: the trec_id it is
                first = uuids[hit.uuid]
                if hits[first].doc_id == str(hit.uuid) and hit.doc_id != str(hit.uuid) and hit.doc_id not in ids:
                    hits[first] = replace(hits[first], doc_id=hit.doc_id)
                    ids.add(hit.doc_id)
                    self.stats.uuid_ids -= 1
            elif hit.doc_id not in ids:
                ids.add(hit.doc_id)
                uuids[hit.uuid] = len(hits)
                hits.append(hit)
        if not hits:
            logger.warning("ChatNoir found nothing usable for topic %s (%s)", topic.number, topic.quoted)
        scores = scores_or_order([hit.score for hit in hits])  # as a re-rank file's: one unusable ranks by order
        if any(hit.score is None for hit in hits):
            self.stats.unscored_topics += 1
        return [replace(hit, score=score) for hit, score in zip(hits, scores)]

    def _hit(self, raw: object) -> Hit | None:
        """A result with a trec_id or uuid is usable; other fields may be missing or null (a score that is no finite
        number is None)."""
        if not isinstance(raw, dict):
            return None
        score, trec_id, uuid = record_score(raw.get("score")), raw.get("trec_id"), raw.get("uuid")
        try:
            uuid = decode_uuid(uuid) if isinstance(uuid, str) and uuid else None
        except ValueError:
            uuid = None
        if isinstance(trec_id, str) and trec_id.strip():
            trec_id = trec_id.strip()  # " clueweb22-en0000-00-00000\n" names the document; the run file's id cannot
            # ChatNoir derives its uuids this way; lets the cache be asked even when a result lacks its uuid.
            uuid = uuid or uuid5(NAMESPACE_URL, f"{index_prefix(self.settings.index)}:{trec_id}")
            doc_id = trec_id
        elif uuid is not None:
            doc_id = str(uuid)
            self.stats.add("uuid_ids")
        else:
            return None
        if len(doc_id) > MAX_ID_CHARS or record_id(doc_id) != doc_id:  # an id a run file cannot hold
            return None
        fields = (raw[name][:MAX_PREVIEW_CHARS] for name in ("title", "snippet") if isinstance(raw.get(name), str))
        preview = " ".join(html_to_text(_PAGES_OWN_LESS_THAN.sub("&lt;", field)) for field in fields).strip()
        return Hit(doc_id=doc_id, uuid=uuid, score=score, preview=bounded_text(preview))

    def _texts(self, hits: dict[str, list[Hit]], text_depth: int | None, answered_query: str) -> dict[str, str]:
        """The texts of each topic's top `text_depth` hits that could be had; the pages an outage cost are asked
        again once ChatNoir answers again (see OUTAGE_FAILURES; `answered_query`: a search it answered)."""
        self._outage_pages = {}
        wanted: dict[str, Hit] = {}
        for topic_hits in hits.values():
            for hit in topic_hits[:text_depth]:
                wanted.setdefault(hit.doc_id, hit)
        texts = self._fetch_texts(list(wanted.values()))
        failed = self._outage_pages
        kept = sum(reason != NOT_ASKED for reason in failed.values())
        if kept and self._answers_again(answered_query, kept, len(failed) - kept):
            logger.info("ChatNoir answers: asking again for the %d pages an outage cost their text", len(failed))
            self.stats.forget_fallbacks(failed.values())
            again = [wanted[doc_id] for doc_id in failed]
            self._forget_outage_failures()
            texts.update(self._fetch_texts(again))
        return texts

    def _answers_again(self, query: str, failed: int, not_asked: int) -> bool:
        """Whether ChatNoir answers: its cache a page it answered before, or (none answered yet) its search `query`;
        asked OUTAGE_PAUSE_S after each failed ask until it does, for MAX_OUTAGE_S at most (said in a warning)."""
        asked = "a page it answered before" if self._answered_page is not None else "a search it answered before"
        started, said = time.monotonic(), False
        while True:
            try:
                if self._answered_page is not None:
                    self.client.cached_text(self._answered_page)
                else:
                    self.client.search(query, 1)
                return True
            except ChatNoirRequestError as error:
                if error.reason not in OUTAGE_FAILURES | {"time-out", "cut answer"}:  # answered (a 404, a 429, ...)
                    return True
                waited = time.monotonic() - started
                if waited + OUTAGE_PAUSE_S >= MAX_OUTAGE_S:  # no ask starts past the bound
                    logger.warning("ChatNoir answered nothing for %.0f s (%s): the %s an outage cost keep title + "
                                   "snippet", waited, error, counted(failed + not_asked, "page"))
                    return False
                if not said:
                    logger.warning("ChatNoir's cache failed %s as an outage does (%d more were not asked for the "
                                   "failures): asking for %s until it is answered, %g s after each failed ask, for "
                                   "%g s at most and the last ask's time-out, then for those pages again",
                                   counted(failed, "page"), not_asked, asked, OUTAGE_PAUSE_S, MAX_OUTAGE_S)
                    said = True
                time.sleep(OUTAGE_PAUSE_S)
            except Exception:  # noqa: BLE001 - answered, with a page that cannot be read: ChatNoir is there
                return True

    def _fetch_texts(self, wanted: list[Hit]) -> dict[str, str]:
        texts: dict[str, str] = {}
        self._stopped.clear()
        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency))
        try:
            fetched = pool.map(self._text, wanted)
            for hit, text in tqdm(zip(wanted, fetched), total=len(wanted), desc="ChatNoir texts", disable=None):
                if text is not None:
                    texts[hit.doc_id] = text
        finally:  # all fetched, or stopped (SIGTERM, Ctrl-C): then the pages not yet asked for are dropped,
            self._stopped.set()  # and the pages still arriving are not written into a cache being removed
            pool.shutdown(wait=False, cancel_futures=True)
        return texts

    def _text(self, hit: Hit) -> str | None:
        """The document's full text from the disk cache or ChatNoir; None (and a counted fallback) when unavailable,
        "" (counted too) for a page of markup without text.

        A defect of one document (a failed fetch, a page that cannot be decoded or parsed, an unreadable cache
        file) costs that document alone: it keeps its title + snippet and the run's summary counts it.
        """
        try:
            return self._fetch_text(hit)
        except Exception as error:  # noqa: BLE001 - one bad page must never cost the run
            logger.debug("ChatNoir document %s: %s: %s", hit.doc_id, type(error).__name__, error)
            self.stats.fallback(f"unreadable page ({type(error).__name__})")
            return None

    def _fetch_text(self, hit: Hit) -> str | None:
        if self.cache is not None:
            cached = self.cache.get(hit.doc_id)
            if cached is not None:
                self.stats.add("cache_hits")
                return cached
        if self._given_up():
            self.stats.fallback(NOT_ASKED)
            self._outage_pages[hit.doc_id] = NOT_ASKED
            return None
        started = time.monotonic()
        try:
            text = bounded_text(self.client.cached_text(hit.uuid))
        except ChatNoirRequestError as error:
            self.stats.fallback(error.reason)
            service = error.reason not in ("HTTP 404", NOT_TEXT, EMPTY_ANSWER)  # a page's own defect, not the service's
            if service:  # minutes of retries each: said as they end, where no progress bar shows (not a terminal)
                logger.info("ChatNoir document %s keeps title + snippet: %s", hit.doc_id, error)
            outage = error.reason in OUTAGE_FAILURES
            self._failed(service, time.monotonic() - started, outage)
            if outage:
                self._outage_pages[hit.doc_id] = error.reason
            if error.reason == "redirected" and not self._redirect_said.is_set():  # the summary counts them only
                self._redirect_said.set()
                logger.warning("ChatNoir's cache: %s; pages keep title + snippet", error)
            return None
        self._failed(False, time.monotonic() - started)
        self._answered_page = self._answered_page or hit.uuid
        if not text:
            self.stats.fallback(NO_TEXT)
            return ""
        if self.cache is not None and not self._stopped.is_set():
            self.cache.put(hit.doc_id, text)
        return text

    def _failed(self, failed: bool, seconds: float, outage: bool = False) -> None:
        """Track the endpoint's failures and the time they took, so a dead or half-dead cache endpoint costs 20
        documents' retries, not thousands, and pages that hang cost minutes, not hours (`_given_up`); `outage`: a
        failure an outage gives (OUTAGE_FAILURES)."""
        with self._failures_lock:
            self._failures_in_a_row = self._failures_in_a_row + 1 if failed else 0
            self._outage_in_a_row = self._outage_in_a_row + 1 if outage else self._outage_in_a_row * failed
            self._failures += failed
            self._answers += not failed
            if failed:
                self._failed_s += seconds
            else:
                self._answered_s += seconds
            if outage:
                self._outage_failures += 1
                self._outage_failed_s += seconds

    def _forget_outage_failures(self) -> None:
        """The outage's failures (OUTAGE_FAILURES) are not the endpoint's: they no longer count toward giving up, its
        own failures (time-outs, a 500 or 504) still do."""
        with self._failures_lock:
            self._failures_in_a_row -= self._outage_in_a_row
            self._failures -= self._outage_failures
            self._failed_s -= self._outage_failed_s
            self._outage_failures = self._outage_in_a_row = 0
            self._outage_failed_s = 0.0

    def _given_up(self) -> bool:
        """Whether the cache endpoint failed MAX_DOCUMENT_FAILURES_IN_A_ROW times in a row, or as often in all and
        at least half as often as it answered, or (of MIN_DOCUMENTS_TIMED pages or more) its failures took
        MAX_DOCUMENT_FAILURE_S and DOCUMENT_FAILURE_SHARE times the time its answers took."""
        with self._failures_lock:
            return (self._failures_in_a_row >= MAX_DOCUMENT_FAILURES_IN_A_ROW
                    or (self._failures >= MAX_DOCUMENT_FAILURES_IN_A_ROW and 2 * self._failures >= self._answers)
                    or (self._failed_s >= MAX_DOCUMENT_FAILURE_S
                        and self._failures + self._answers >= MIN_DOCUMENTS_TIMED
                        and self._failed_s >= DOCUMENT_FAILURE_SHARE * self._answered_s))

    def _log_summary(self) -> None:
        stats = self.stats
        logger.info(
            "ChatNoir %s: %d topics, %d search + %d document requests (%d retries), %d texts from the disk cache, "
            "%.2f s",
            self.settings.index, stats.topics, stats.search_requests, stats.document_requests, stats.retries,
            stats.cache_hits, stats.seconds,
        )
        if self.cache is not None and self.cache.damaged:
            logger.warning("ChatNoir: %d cached texts in %s were damaged and fetched again", self.cache.damaged,
                           self.cache.directory)
        if stats.dropped_results:
            logger.warning("ChatNoir: dropped %d results without a usable document id (none, or one a run file "
                           "cannot hold)", stats.dropped_results)
        if stats.uuid_ids:
            logger.warning("ChatNoir: %d results carry no trec_id; their uuids stand in, which qrels of ClueWeb "
                           "documents do not name", stats.uuid_ids)
        if stats.unscored_topics:
            logger.warning("ChatNoir: %d topics ranked by ChatNoir's order, their results' scores being no finite "
                           "numbers", stats.unscored_topics)
        if stats.fallbacks:
            reasons = ", ".join(f"{reason}: {count}" for reason, count in stats.fallbacks.most_common())
            documents = sum(stats.fallbacks.values())
            logger.warning("ChatNoir: %s title + snippet, their text could not be fetched or read (%s)",
                           counted(documents, "document") + (" uses" if documents == 1 else " use"), reasons)
