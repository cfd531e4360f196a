"""A faithful local ChatNoir for tests: a real HTTP server on 127.0.0.1 speaking the API of reference §3.

`POST /api/v1/_search` reads a text/plain JSON body {"apikey", "query", "index", "from", "size", "explain",
"minimal", "search_method"} and answers {"meta": {...}, "results": [...]} with every field the strict
chatnoir-api 3.4.2 models require (short uuids, <em> highlights). `GET /cache?uuid=&index=&raw=&plain=&apikey=`
answers the page's HTML. Both check the API key (401). Faults are queued per endpoint and served to the next
requests: "401", "403", "429" (with Retry-After: 0), "500", "502", "503", "504", "hang" (no answer for `hang_s`),
"malformed" (truncated JSON), "gateway-html" (a proxy's HTML error page with status 200), "pdf" (PDF bytes as
application/pdf), "binary" (the same bytes as text/html), "binary-latin1" / "binary-utf16" (random bytes as ISO-8859-1 / after
a UTF-16 byte order mark), "missing-fields" (results without lang and cache_uri),
"missing-id" (the first result without uuid and trec_id), "nan-score" (the first result scored NaN, as Python's
json writes it), "trickle" (status and headers at once, then the body one byte per `hang_s` / 20), "cut" (half the announced
body, then the connection closes), "gzip-bomb" (a page of `bomb_bytes` bytes sent gzipped, about a thousandth as long),
"trickle-status" (the status line one byte per `hang_s` / 20, never the headers), "trickle-headers" (the
status line at once, then the headers so), "gzip-trickle" (a gzipped body of empty deflate blocks, one per
`hang_s` / 20: bytes that decode to nothing), "redirect" (307 to the same path on
"localhost", another host name, with the query; "redirect-same": on this host; "redirect-bad": to "http://[bad";
"redirect-keyless": 302 to this host with the query but not the key), "utf16" (the page as UTF-16 with a byte order
mark, as text/html without a charset), "bom" (the search answer's JSON after a UTF-8 byte order mark), "two-lengths"
(two Content-Length headers that differ); "pass" answers
as without a fault (a fault for the requests after the next).

Not a package module (tests/ is not a package): load it with importlib from its path.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import threading
from collections import Counter, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from uuid import NAMESPACE_URL, UUID, uuid5

FAULTS = ("401", "403", "429", "500", "502", "503", "504", "hang", "malformed", "gateway-html", "pdf", "binary",
          "missing-fields", "missing-id", "nan-score", "trickle", "cut", "gzip-bomb", "trickle-status",
          "trickle-headers", "redirect", "redirect-same", "redirect-bad", "redirect-keyless", "utf16", "bom",
          "binary-latin1", "binary-utf16", "bogus-header", "no-results", "json-page", "two-lengths", "gzip-trickle",
          "pass")
# Faults that replace a page's content: only a page the stub has can get one (`next_fault`).
PAGE_FAULTS = ("pdf", "binary", "gzip-bomb", "utf16", "binary-latin1", "binary-utf16", "bogus-header")
PDF_BYTES = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 40
RANDOM_BYTES = random.Random(13).randbytes(10_000)  # compressed or encrypted data looks so
MAX_HITS = 10_000
_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]+>")
_INVISIBLE = re.compile(r"<(script|style|head)\b.*?</\1>", re.S | re.I)


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up (a time-out test) breaks the pipe; that is no error of the stub's to print."""

    def handle_error(self, request, client_address):
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@dataclass(frozen=True)
class StubDocument:
    trec_id: str | None
    uuid: UUID
    title: str
    url: str
    html: str
    cached: bool

    @property
    def short_uuid(self) -> str:
        """ChatNoir's results carry uuids as unpadded url-safe base64."""
        return base64.urlsafe_b64encode(self.uuid.bytes).decode("ascii").rstrip("=")

    @property
    def text(self) -> str:
        return " ".join(_TAG.sub(" ", _INVISIBLE.sub(" ", self.html)).split())


def read_corpus(path: Path, prefix: str = "clueweb22") -> list[StubDocument]:
    """Documents from a JSONL file {trec_id, title, url, html, cached}; uuids derived the way ChatNoir does."""
    documents = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        key = row["trec_id"] or f"no-trec-id-{number}"
        documents.append(StubDocument(
            row["trec_id"], uuid5(NAMESPACE_URL, f"{prefix}:{key}"), row["title"], row["url"], row["html"],
            row.get("cached", True),
        ))
    return documents


class ChatNoirStub:
    """The server, started on a free port in a daemon thread; `requests` records every request it received."""

    def __init__(self, documents: list[StubDocument], api_key: str, index: str = "cw22", hang_s: float = 2.0):
        self.documents = documents
        self._terms = [(Counter(_words(document.title)), Counter(_words(document.text))) for document in documents]
        self.api_key = api_key
        self.index = index
        self.hang_s = hang_s
        self.bomb_bytes = 1 << 20  # the "gzip-bomb" page, decoded
        self.page_cap: int | None = None  # a service answering at most this many results a request
        self.ignore_from = False  # a service answering the first page whatever "from" asks
        self.redirect_suffix = ""  # added to the "redirect-keyless" address's query ("&apikey=": an empty key)
        self.requests: list[dict] = []
        self._faults: dict[str, deque[str]] = {"search": deque(), "cache": deque()}
        self._lock = threading.Lock()
        self._failing_queries: dict[str, str] = {}
        self.stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> "ChatNoirStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes handlers stuck in a "hang" fault
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def fail(self, endpoint: str, fault: str, times: int = 1) -> None:
        """Serve `fault` to the next `times` requests to `endpoint` ("search" or "cache"; PAGE_FAULTS only to
        requests for pages the stub has)."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        with self._lock:
            self._faults[endpoint].extend([fault] * times)

    def fail_query(self, query: str, fault: str) -> None:
        """Serve `fault` to every search for `query`, however often it is asked."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        with self._lock:
            self._failing_queries[query] = fault

    def count(self, endpoint: str) -> int:
        return sum(1 for request in self.requests if request["endpoint"] == endpoint)

    def next_fault(self, endpoint: str, has_page: bool = True) -> str | None:
        """The next queued fault; one of PAGE_FAULTS stays queued for a page the stub lacks, so that page is a 404
        in whatever order concurrent fetches arrive."""
        with self._lock:
            queue = self._faults[endpoint]
            if not queue or (not has_page and queue[0] in PAGE_FAULTS):
                return None
            fault = queue.popleft()
            return None if fault == "pass" else fault

    def record(self, request: dict) -> None:
        with self._lock:
            self.requests.append(request)

    def search(self, query: str, start: int, size: int) -> tuple[int, list[tuple[float, StubDocument]]]:
        """Term-frequency ranking over title (weight 2) and text; ties by position in the corpus."""
        terms = _words(query)
        scored = []
        for position, (document, (title, text)) in enumerate(zip(self.documents, self._terms)):
            score = sum(2 * title[term] + text[term] for term in terms)
            if score:
                scored.append((-score, position, document))
        scored.sort(key=lambda item: item[:2])
        hits = [(float(-score), document) for score, _, document in scored][:MAX_HITS]
        return len(hits), hits[start:start + size]

    def result(self, score: float, document: StubDocument, query: str) -> dict:
        terms = {term.lower() for term in _WORD.findall(query)}

        def highlight(text: str) -> str:
            return _WORD.sub(lambda word: f"<em>{word[0]}</em>" if word[0].lower() in terms else word[0], text)

        return {
            "index": self.index,
            "uuid": document.short_uuid,
            "score": score,
            "target_uri": document.url,
            "title": highlight(document.title),
            "snippet": highlight(document.text[:200]),
            "warc_id": f"<urn:uuid:{document.uuid}>",
            "trec_id": document.trec_id,
            "cache_uri": f"/cache?uuid={document.uuid}&index={self.index}",
            "target_hostname": urlsplit(document.url).hostname,
            "crawl_date": "2022-02-01T00:00:00",
            "page_rank": None,
            "spam_rank": 80,
            "content_type": "text/html",
            "lang": "en",
        }

    def document(self, uuid: str) -> StubDocument | None:
        for document in self.documents:
            if uuid in (str(document.uuid), document.short_uuid):
                return document
        return None


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _handler(stub: ChatNoirStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body leave in one write: no Nagle / delayed-ACK stall on keep-alive
        disable_nagle_algorithm = True

        def log_message(self, format, *args):  # keep test output clean
            pass

        def do_POST(self):
            url = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            stub.record({"endpoint": "search", "path": url.path, "body": body,
                         "content_type": self.headers.get("Content-Type")})
            if url.path != "/api/v1/_search":
                return self._json(404, {"error": "not found"})
            if not isinstance(body, dict):
                return self._json(400, {"error": "request body must be a JSON object"})
            if self._fault("search") or self._query_fault(body):
                return
            if body.get("apikey") != stub.api_key:
                return self._json(401, {"error": "API key invalid or missing"})
            if body.get("index") != [stub.index]:
                return self._json(400, {"error": f"unknown index {body.get('index')!r}"})
            start, size = body.get("from", 0), body.get("size", 10)  # the server reads "from", never "start"
            if not isinstance(start, int) or not isinstance(size, int) or start < 0 or size < 0:
                return self._json(400, {"error": "from and size must be non-negative integers"})
            query = str(body.get("query", ""))
            total, hits = stub.search(query, 0 if stub.ignore_from else start, min(size, stub.page_cap or size))
            fault = self._pending_result_fault
            results = [stub.result(score, document, query) for score, document in hits]
            if fault == "missing-fields":
                for result in results:
                    del result["lang"], result["cache_uri"]
            if fault == "missing-id" and results:
                del results[0]["uuid"], results[0]["trec_id"]
            if fault == "nan-score" and results:
                results[0]["score"] = float("nan")
            meta = {"query_time": 3, "total_results": total, "indices": [stub.index],
                    "search_method": body.get("search_method", "default")}
            if fault == "bom":
                return self._send(200, json.dumps({"meta": meta, "results": results}).encode("utf-8-sig"),
                                  "application/json; charset=utf-8")
            self._json(200, {"meta": meta, "results": results})

        def do_GET(self):
            url = urlsplit(self.path)
            params = {name: values[0] for name, values in parse_qs(url.query).items()}
            stub.record({"endpoint": "cache", "path": url.path, "params": params})
            if url.path != "/cache":
                return self._json(404, {"error": "not found"})
            document = stub.document(params.get("uuid", ""))
            has_page = document is not None and document.cached and params.get("index") == stub.index
            if self._fault("cache", has_page):
                return
            if params.get("apikey") != stub.api_key:
                return self._json(401, {"error": "API key invalid or missing"})
            if not has_page:
                return self._send(404, b"Document not found", "text/plain")
            if self._pending_result_fault == "utf16":
                return self._send(200, document.html.encode("utf-16"), "text/html")
            if self._pending_result_fault == "bogus-header":  # a header line without a colon; the page is fine
                return self._send(200, document.html.encode("utf-8"), "text/html; charset=utf-8",
                                  raw_header=b"a header line without a colon\r\n")
            self._send(200, document.html.encode("utf-8"), "text/html; charset=utf-8")

        _pending_result_fault: str | None = None

        def _query_fault(self, body: dict) -> bool:
            """Serve the fault `fail_query` set for this search's query; True when it answered the request."""
            fault = stub._failing_queries.get(str(body.get("query", "")))
            return fault is not None and self._serve(fault)

        def _fault(self, endpoint: str, has_page: bool = True) -> bool:
            """Serve the next queued fault; True when it answered the request."""
            self._pending_result_fault = None  # a kept-alive connection's handler serves many requests
            return self._serve(stub.next_fault(endpoint, has_page))

        def _serve(self, fault: str | None) -> bool:
            """Answer with `fault` unless it shapes the results (or is None); True when it answered."""
            if fault in ("401", "403", "500", "502", "503", "504"):
                self._json(int(fault), {"error": f"fault {fault}"})
            elif fault == "429":
                self._json(429, {"error": "quota exceeded"}, {"Retry-After": "0"})
            elif fault == "hang":
                stub.stopping.wait(stub.hang_s)
                self._json(504, {"error": "too late"})
            elif fault == "malformed":
                self._send(200, b'{"meta": {"query_time": 1}, "results": [{"uuid": "abc", "sco', "application/json")
            elif fault == "trickle":  # every read gets a byte within any time-out; the whole answer never comes
                self._send(200, b'{"meta": {}, "results": []}', "application/json", pause=stub.hang_s / 20)
            elif fault in ("trickle-status", "trickle-headers"):  # each read gets a byte in time; the headers never
                status = b"HTTP/1.1 200 OK\r\n"           # come
                self.wfile.write(status if fault == "trickle-headers" else b"")
                for byte in (b"" if fault == "trickle-headers" else status) + b"Content-Type: application/json\r\n":
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if stub.stopping.wait(stub.hang_s / 20):
                        break
                self.close_connection = True
            elif fault == "gzip-trickle":  # each read gets bytes in time, which decode to nothing, for ever
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                                 b"Connection: close\r\n\r\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
                while not stub.stopping.wait(stub.hang_s / 20):
                    try:
                        self.wfile.write(b"\x00\x00\x00\xff\xff")  # an empty stored deflate block
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        break
                self.close_connection = True
            elif fault in ("redirect", "redirect-same", "redirect-bad"):
                port = self.server.server_address[1]
                host = {"redirect": f"http://localhost:{port}", "redirect-same": f"http://127.0.0.1:{port}",
                        "redirect-bad": "http://[bad"}[fault]
                self._send(307, b"", "text/plain", {"Location": f"{host}{self.path}"})
            elif fault == "redirect-keyless":  # to this host, the query named again but without the key
                parts = urlsplit(self.path)
                query = "&".join(pair for pair in parts.query.split("&") if not pair.startswith("apikey="))
                self._send(302, b"", "text/plain", {"Location": f"{parts.path}?{query}{stub.redirect_suffix}"})
            elif fault == "two-lengths":  # two Content-Length headers that differ: malformed headers
                body = b'{"meta": {}, "results": []}'
                self._send(200, body, "application/json", raw_header=f"Content-Length: {len(body) + 1}\r\n".encode())
            elif fault == "cut":
                self._send(200, b'{"meta": {}, "resu', "application/json", {"Content-Length": "36"})
                self.close_connection = True
            elif fault == "gateway-html":
                self._send(200, b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>", "text/html")
            elif fault == "gzip-bomb":  # a page that decodes to far more than it weighs on the wire
                page = b"<html><body><p>" + b"boom " * (stub.bomb_bytes // 5) + b"</p></body></html>"
                self._send(200, gzip.compress(page, 9), "text/html; charset=utf-8", {"Content-Encoding": "gzip"})
            elif fault in ("pdf", "binary"):  # a PDF as served, or the same bytes claiming to be a page
                self._send(200, PDF_BYTES, "application/pdf" if fault == "pdf" else "text/html; charset=utf-8")
            elif fault == "binary-latin1":  # every byte is a Latin-1 character
                self._send(200, RANDOM_BYTES, "text/html; charset=iso-8859-1")
            elif fault == "binary-utf16":  # bytes that open as a UTF-16 byte order mark do
                self._send(200, b"\xff\xfe" + RANDOM_BYTES, "text/html")
            elif fault == "no-results":  # JSON, but no results list
                self._json(200, {"meta": {"query_time": 1}, "results": None})
            elif fault == "json-page":  # the API's error as a cache answer
                self._json(200, {"error": "document not found"})
            else:
                self._pending_result_fault = fault
                return False
            return True

        def _json(self, status: int, payload: dict, headers: dict | None = None):
            self._send(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

        def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None,
                  pause: float = 0.0, raw_header: bytes = b""):
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                headers = {"Content-Length": str(len(body)), **(headers or {})}
                for name, value in headers.items():
                    self.send_header(name, value)
                if raw_header:
                    self._headers_buffer.append(raw_header)
                self.end_headers()
                if not pause:
                    self.wfile.write(body)
                for position in range(len(body) if pause else 0):
                    self.wfile.write(body[position:position + 1])
                    self.wfile.flush()
                    if stub.stopping.wait(pause):
                        return
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out test)
                pass

    return Handler
