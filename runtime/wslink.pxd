# Cython declarations for runtime/wslink.py (pure-Python mode).
cimport cython
from picows.picows cimport WSFrame, WSListener, WSTransport

cdef int _TEXT, _BINARY, _CONTINUATION, _CLOSE, _PONG
cdef object _MT_TEXT, _CC_OK, _CC_TOO_BIG


cdef class DeviceLink(WSListener):
    cdef public object gateway
    cdef public object handshake
    cdef public Py_ssize_t max_message
    cdef public WSTransport transport
    cdef public object device
    cdef public object session
    cdef public int state
    cdef public long long frames
    cdef public long long frames_seen
    cdef public double deadline
    cdef public bint ping_outstanding
    cdef public double ping_sent
    cdef public str close_reason
    cdef public bint oversize
    cdef object _parts
    cdef int _part_type

    cpdef on_ws_connected(self, WSTransport transport)
    @cython.locals(mt=int, session=object, data=bytes, f=object)
    cpdef on_ws_frame(self, WSTransport transport, WSFrame frame)
    cdef _other_frame(self, WSFrame frame, int mt)
    cdef _message(self, bytes data)
    cpdef on_ws_disconnected(self, WSTransport transport)
    cpdef send_now(self, bytes data)
