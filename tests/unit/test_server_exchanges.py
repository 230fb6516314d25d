"""A worker's WSGI app under Granian's ASGI interface (dashboard/server.py WholeExchanges):
a small request is read whole in the event loop and its answer sent whole after the app
ran in a pool thread; a large body goes to a2wsgi, a large answer streams."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from dashboard.server import WHOLE_BYTES, WholeExchanges


def _scope(method: str = "POST", headers: list | None = None) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": "/api/v1/echo", "raw_path": b"",
            "query_string": b"a=1", "root_path": "", "headers": headers or [],
            "client": ("127.0.0.1", 4000), "server": ("127.0.0.1", 8050)}


def _exchange(app, scope: dict, chunks: list[bytes]) -> list[dict]:
    """Run one request through ``app`` with the body sent in ``chunks``; what it sent."""
    sent: list[dict] = []

    async def run() -> None:
        left = list(chunks)
        loop = asyncio.get_running_loop()

        def answered(value: object) -> asyncio.Future:
            future = loop.create_future()
            future.set_result(value)
            return future

        # as Granian's: plain calls that answer futures, not coroutine functions
        def receive() -> asyncio.Future:
            if not left:
                return answered({"type": "http.disconnect"})
            body = left.pop(0)
            return answered({"type": "http.request", "body": body, "more_body": bool(left)})

        def send(message: dict) -> asyncio.Future:
            sent.append(message)
            return answered(None)

        await app(scope, receive, send)

    asyncio.run(run())
    return sent


class _Recorder:
    """A WSGI app answering what it read, and noting whether it was closed."""

    def __init__(self, answer: list[bytes] | None = None) -> None:
        self.answer, self.closed, self.environ = answer, False, None

    def __call__(self, environ, start_response):
        self.environ = environ
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", " yes ")])
        outer = self

        class Answer:
            def __iter__(self):
                return iter(outer.answer if outer.answer is not None else [b"got ", body])

            def close(self):
                outer.closed = True
        return Answer()


def _streaming_fails(scope, receive, send):
    raise AssertionError("a small request went to the streaming path")


def test_a_small_request_is_one_exchange_with_the_whole_answer():
    wsgi = _Recorder()
    with ThreadPoolExecutor(2) as pool:
        app = WholeExchanges(wsgi, _streaming_fails, pool)
        sent = _exchange(app, _scope(headers=[(b"content-length", b"12"),
                                              (b"content-type", b"application/json"),
                                              (b"x-forwarded-user", b"sam")]),
                         [b'{"a":', b' 12345}'])
    assert sent == [{"type": "http.response.start", "status": 201,
                     "headers": [(b"content-type", b"text/plain"), (b"x-seen", b"yes")]},
                    {"type": "http.response.body", "body": b'got {"a": 12345}'}]
    env = wsgi.environ
    assert (env["REQUEST_METHOD"], env["PATH_INFO"], env["QUERY_STRING"]) == \
        ("POST", "/api/v1/echo", "a=1")
    assert (env["CONTENT_TYPE"], env["CONTENT_LENGTH"], env["HTTP_X_FORWARDED_USER"],
            env["REMOTE_ADDR"]) == ("application/json", "12", "sam", "127.0.0.1")
    assert wsgi.closed


def test_a_request_without_a_length_has_no_body_to_read():
    """As werkzeug reads no body without a Content-Length: none is read nor kept (an
    HTTP/2 client could send one of any size)."""
    wsgi = _Recorder()
    with ThreadPoolExecutor(1) as pool:
        app = WholeExchanges(wsgi, _streaming_fails, pool)
        sent = _exchange(app, _scope("GET"), [])
        assert [m.get("status") for m in sent] == [201, None] and sent[1]["body"] == b"got "
        assert _exchange(app, _scope("POST"), [b"x" * 100, b"y"])[1]["body"] == b"got "
    assert wsgi.environ["wsgi.input"].read() == b""


def test_a_body_longer_than_its_length_is_cut_at_it():
    with ThreadPoolExecutor(1) as pool:
        sent = _exchange(WholeExchanges(_Recorder(), _streaming_fails, pool),
                         _scope(headers=[(b"content-length", b"3")]), [b"abcdef"])
    assert sent[1]["body"] == b"got abc"


def test_a_large_body_or_a_chunked_one_goes_to_the_streaming_app():
    taken = []

    async def streaming(scope, receive, send):
        taken.append(scope.get("headers"))

    big = [(b"content-length", str(WHOLE_BYTES + 1).encode())]
    chunked = [(b"transfer-encoding", b"chunked")]
    twice = [(b"content-length", b"1"), (b"content-length", b"1")]
    with ThreadPoolExecutor(1) as pool:
        app = WholeExchanges(_Recorder(), streaming, pool)
        for headers in (big, chunked, twice):
            assert _exchange(app, _scope(headers=headers), [b""]) == []
        assert _exchange(app, {"type": "lifespan"}, []) == []
    assert taken == [big, chunked, twice, None]


def test_an_answer_larger_than_whole_bytes_streams():
    part = b"x" * (WHOLE_BYTES // 2 + 1)
    wsgi = _Recorder([part, part, b"tail"])
    with ThreadPoolExecutor(1) as pool:
        sent = _exchange(WholeExchanges(wsgi, _streaming_fails, pool), _scope("GET"), [b""])
    assert sent[0]["status"] == 201
    assert [(len(m["body"]), m.get("more_body", False)) for m in sent[1:]] == \
        [(2 * len(part), True), (4, True), (0, False)]
    assert wsgi.closed


def test_a_client_gone_before_its_body_came_runs_nothing():
    wsgi = _Recorder()
    with ThreadPoolExecutor(1) as pool:
        sent = _exchange(WholeExchanges(wsgi, _streaming_fails, pool),
                         _scope(headers=[(b"content-length", b"10")]), [])
    assert sent == [] and wsgi.environ is None
