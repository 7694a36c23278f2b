# Cython declarations for runtime/core/rpcsession.py (pure-Python mode).
cimport cython
from mcpgen.runtime.core.wire cimport (Frame, classify, decode_result, new_frame, rpc_error,
                                       rpc_error_fields, text_scalar, undecodable)

cdef object _loads
cdef object _dumps
cdef object _JSONDecodeError
cdef object _fast_decode
cdef object _FastError
cdef bytes _EMPTY, _CALL_CLOSE_BARE, _CALL_CLOSE_ENV, _TEXT_RESULT, _TEXT_END
cdef object _Future
cdef object _future_set_result
cdef object _future_set_exception
cdef object _InvalidStateError
cdef object _MISSING
cdef double _ID_FLOAT_MAX
cdef bint _COMPILED

cdef int _K_NONE, _K_BOOLEAN, _K_INTEGER, _K_NUMBER, _K_STRING
cdef int _F_INVALID

# The msgspec Structs of wire's reply fast path (_Env, _Inner, _Err, _Result, _Content)
# read as C structs: a field is a pointer load instead of a ~9 ns attribute lookup
# through the type (CPython lays slots out in sorted name order after the object header).
# The module checks the layout once when it loads (_views_match) and turns the fast path
# off if msgspec ever lays them out otherwise.
cdef extern from *:
    """
    typedef struct { PyObject_HEAD PyObject *text; } McpgenContentView;
    typedef struct { PyObject_HEAD PyObject *content, *isError; } McpgenResultView;
    typedef struct { PyObject_HEAD PyObject *code, *data, *message; } McpgenErrView;
    typedef struct {
        PyObject_HEAD
        McpgenErrView *error;
        PyObject *id, *method;
        McpgenResultView *result;
    } McpgenInnerView;
    typedef struct { PyObject_HEAD McpgenInnerView *payload; PyObject *type; } McpgenEnvView;
    """
    ctypedef class mcpgen.runtime.core.wire._Content [object McpgenContentView, check_size ignore]:
        cdef object text
    ctypedef class mcpgen.runtime.core.wire._Result [object McpgenResultView, check_size ignore]:
        cdef object content, isError
    ctypedef class mcpgen.runtime.core.wire._Err [object McpgenErrView, check_size ignore]:
        cdef object code, data, message
    ctypedef class mcpgen.runtime.core.wire._Inner [object McpgenInnerView, check_size ignore]:
        cdef object id, method
        cdef _Result result
        cdef _Err error
    ctypedef class mcpgen.runtime.core.wire._Env [object McpgenEnvView, check_size ignore]:
        cdef _Inner payload
        cdef object type

cdef object _fast_env_decode
cdef Py_ssize_t _WORD
@cython.locals(e=_Env, m=_Inner)
cdef bint _views_match()

cdef object _resolve(object fut, object value)
cdef object _reject(object fut, object exc)


cdef class Pending:
    cdef public object future
    cdef public int kind
    cdef public long long rid
    cdef public double due
    cdef public double timeout
    cdef public object owner
    cdef public object what


cdef Pending _free_slot()
cdef long long _RID_MAX
cdef Py_ssize_t _RING_SPARE, _RING_MAX
cdef dict _HEADS
cdef bytes _ERROR_KEY
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
cdef extern from "string.h":
    const void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen)
    void *memcpy(void *dest, const void *src, size_t n)
    int memcmp(const void *s1, const void *s2, size_t n)
    const void *memchr(const void *s, int c, size_t n)
cdef bint _has_error_key(bytes data)
cdef Py_ssize_t _HEADS_MAX
@cython.locals(nd=Py_ssize_t, v="long long", n1=Py_ssize_t, n2=Py_ssize_t, n3=Py_ssize_t, n4=Py_ssize_t,
               out=bytes, p="char *")
cdef bytes _request_bytes(bytes open_, long long rid, bytes head, bytes body, bytes close)


# Fields in the order a call reads them, the rare ones last: with a thousand devices a
# session is out of the CPU cache when its next call starts, and each cache line of it
# that a call reads is a miss. The inherited Pending fields come first: the session is its
# ring's slot while one call at a time is in flight (rpcsession.py says why).
cdef class RpcSession(Pending):
    cdef long long _mask
    cdef list _slots
    cdef Py_ssize_t _live
    cdef Py_ssize_t _fast_live
    cdef readonly long long next_id
    cdef readonly long long last_id
    cdef object _head_name
    cdef bytes _head
    cdef bytes _req_open
    cdef bytes _call_close
    cdef public bint on_sweep
    cdef readonly object session_id
    cdef dict _extra
    cdef public long long stale
    cdef bytes _env_open
    cdef bytes _env_close

    cdef _set_framing(self, object session_id)
    cdef long long _take_id(self)
    # request id -> pending entry (rpcsession.py): the one mapping
    cdef inline bint _ring_kept(self, object request_id) except -1
    cdef inline Pending ring_slot(self, long long request_id)
    @cython.locals(rid="long long", p=Pending)
    cdef inline Pending _ring_held(self, object request_id)
    @cython.locals(old=list, n=Py_ssize_t, mask="long long", slots=list, p=Pending, i=Py_ssize_t)
    cdef _grow(self)
    @cython.locals(q=Pending)
    cdef Pending _own_slot_moved(self)
    @cython.locals(p=Pending, q=Pending)
    cdef Pending _put(self, object request_id, object future, int kind)
    @cython.locals(p=Pending, n=Py_ssize_t)
    cdef Pending _put_rid(self, long long rid, object future, int kind)
    @cython.locals(p=Pending)
    cdef Pending _find(self, object request_id)
    @cython.locals(p=Pending)
    cdef Pending _take(self, object request_id)
    @cython.locals(q=Pending)
    cdef Pending _extra_pop(self, object request_id)
    cdef inline void _release(self, Pending p) noexcept
    @cython.locals(fut=object)
    cdef inline object _take_future(self, Pending p)
    cdef object _drop(self, Pending p, object rid)
    @cython.locals(head=bytes, rid="long long")
    cpdef bytes tools_call(self, str name, object arguments)
    @cython.locals(rid="long long")
    cpdef bytes request(self, str method, object params=*)
    cpdef expect(self, object request_id, object future, int kind)
    cpdef bytes call(self, str name, object arguments, object future, int kind)
    @cython.locals(rid="long long")
    cpdef bytes call_encoded(self, bytes tail, object future, int kind)
    cpdef bint is_pending(self, object request_id)
    @cython.locals(p=Pending)
    cpdef bint forget(self, object request_id)
    @cython.locals(p=Pending)
    cpdef bint fail(self, object request_id, object exc)
    @cython.locals(p=Pending, futs=list, q=Pending)
    cpdef Py_ssize_t fail_all(self, object exc)
    @cython.locals(p=Pending, msg=dict, payload=dict, fut=object)
    cpdef object feed(self, object data)
    @cython.locals(s=str, f=double)
    cdef Pending _pop_coerced(self, object rid)
    @cython.locals(open_=bytes, close=bytes, n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t,
                   t0=Py_ssize_t, q=Py_ssize_t, rid="long long", buf="const char *", hit="const char *",
                   p=Pending, found=Pending, kind=int, s=str)
    cdef bint _feed_exact(self, bytes data) except -1
    @cython.locals(p=Pending, kind=int, rid=object, env=_Env, m=_Inner, err=_Err, res=_Result,
                   item=_Content)
    cdef bint _feed_reply(self, object data) except -1
    # Read by the loop's deadline sweep (deadlines.pxd cimports this class; and ring_slot).
    cdef list ring(self)
    cdef bint ring_idle(self)
