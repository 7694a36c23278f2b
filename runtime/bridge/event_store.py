"""A bounded in-memory ``EventStore`` for one handshake-era HTTP session.

The SDK's Streamable HTTP transport numbers every SSE message it sends through the
store it is given, including messages for the session's GET stream sent while no
stream is open, and replays from it when a client reconnects with ``Last-Event-ID``.
The SDK ships only the interface. One store serves one session (``http.py`` gives each
session its own): the SDK keys a session's GET stream by the same name in every
session, so a shared store could not tell two sessions' streams apart.

Ids: the GET stream's messages are numbered 1, 2, 3, ... (a client sees consecutive
ids on the stream it keeps); messages of a POST's stream (progress, the answer, the
SDK's priming event) are ``r1``, ``r2``, ... so the two kinds never collide.
"""

from __future__ import annotations

from collections import deque

from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp.types import JSONRPCMessage

GET_HISTORY = 256
"""GET-stream messages kept for resumption."""
REQUEST_HISTORY = 256
"""POST-stream messages kept for resumption (all of a session's POSTs together)."""


class SessionEventStore(EventStore):
    """The last ``GET_HISTORY`` GET-stream and ``REQUEST_HISTORY`` POST-stream messages."""

    def __init__(self, get_history: int = GET_HISTORY, request_history: int = REQUEST_HISTORY) -> None:
        self._get: deque[tuple[int, JSONRPCMessage | None]] = deque(maxlen=get_history)
        self._next_get = 1
        self._requests: deque[tuple[int, StreamId, JSONRPCMessage | None]] = deque(maxlen=request_history)
        self._next_request = 1

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        if stream_id == GET_STREAM_KEY:
            number = self._next_get
            self._next_get += 1
            self._get.append((number, message))
            return str(number)
        number = self._next_request
        self._next_request += 1
        self._requests.append((number, stream_id, message))
        return f"r{number}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send what followed ``last_event_id`` on its stream; return that stream.

        A GET-stream id replays every kept message after it (all that is kept if it
        is older than that). An id this store never issued (another session's, a
        forged one, ``"²"``, 5000 digits) replays nothing and resumes the GET stream
        live, as a GET without ``Last-Event-ID`` would.
        """
        text = last_event_id.strip()
        if text.startswith("r") and text[1:].isascii() and text[1:].isdigit() and len(text) <= 21:
            number = int(text[1:])
            stream = next((s for n, s, _ in self._requests if n == number), None)
            if stream is not None:
                for n, s, message in list(self._requests):
                    if n > number and s == stream and message is not None:
                        await send_callback(EventMessage(message, f"r{n}"))
                return stream
            return GET_STREAM_KEY
        if text.isascii() and text.isdigit() and len(text) <= 20:
            last = int(text)
            if last < self._next_get:
                for n, message in list(self._get):
                    if n > last and message is not None:
                        await send_callback(EventMessage(message, str(n)))
        return GET_STREAM_KEY
