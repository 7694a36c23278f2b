# Cython declarations for runtime/links/websocket/wslink.py (pure-Python mode).
cimport cython
from picows.picows cimport MemoryBuffer, WSFrame, WSListener, WSTransport
from picows.picows cimport WSMsgType as _CMsgType
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from mcpgen.runtime.core.rpcsession cimport RpcSession

cdef int _TEXT, _BINARY, _CONTINUATION, _CLOSE, _PONG
cdef int _AWAIT_HELLO, _RUNNING, _CLOSING
cdef _CMsgType _MT_TEXT
cdef object _CC_OK, _CC_TOO_BIG, _CC_INVALID_TEXT
cdef int _F_INVALID
cdef Py_ssize_t WRITE_BUFFER
cdef Py_ssize_t _READ_CHUNK
cdef object _base_get_buffer, _base_buffer_updated


cdef class DeviceLink(WSListener):
    cdef public object gateway
    cdef public object handshake
    cdef public Py_ssize_t max_message
    cdef public WSTransport transport
    cdef public object device
    # Typed: the per-frame RpcSession.feed is a C call through the codec's vtable.
    cdef public RpcSession session
    cdef public int state
    cdef public long long frames
    cdef public long long frames_seen
    cdef public double deadline
    cdef public bint ping_outstanding
    cdef public double ping_sent
    cdef public str close_reason
    cdef public bint oversize
    cdef public bint write_paused
    cdef public double stall_deadline
    cdef object _parts
    cdef int _part_type
    cdef MemoryBuffer _rbuf
    cdef object _proto
    cdef Py_ssize_t _offered
    cdef Py_ssize_t _turn
    cdef public bint paced

    cpdef on_ws_connected(self, WSTransport transport)
    @cython.locals(mt=int, session=RpcSession, data=bytes, f=object)
    cpdef on_ws_frame(self, WSTransport transport, WSFrame frame)
    cdef _other_frame(self, WSFrame frame, int mt)
    @cython.locals(session=RpcSession)
    cdef _message(self, bytes data)
    cdef _not_a_reply(self, object f, bytes data)
    cpdef pause_writing(self)
    cpdef resume_writing(self)
    cpdef on_ws_disconnected(self, WSTransport transport)
    cpdef send_now(self, bytes data)
    @cython.locals(buf=MemoryBuffer, data=cython.p_char, free=Py_ssize_t)
    cpdef bint compact_read_buffer(self)
