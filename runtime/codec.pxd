# Cython declarations for runtime/codec.py (pure-Python mode).
cimport cython

cdef object _loads
cdef object _dumps
cdef object _JSONDecodeError
cdef object _fast_decode
cdef object _FastError
cdef bytes _EMPTY, _CALL_CLOSE_BARE, _CALL_CLOSE_ENV
cdef object _Future
cdef object _future_set_result
cdef object _future_set_exception
cdef object _InvalidStateError
cdef object _exc_new
cdef object _MISSING
cdef double _INF
cdef double _ID_FLOAT_MAX
cdef bint _COMPILED

cdef int _K_RAW, _K_AUTO, _K_NONE, _K_BOOLEAN, _K_INTEGER, _K_NUMBER, _K_STRING, _K_OBJECT, _K_IMAGE
cdef int _F_INVALID, _F_REQUEST, _F_NOTIFICATION, _F_RESULT, _F_ERROR, _F_OTHER


cdef class Image:
    cdef readonly str mime_type
    cdef readonly str data_base64
    cdef object _data


cdef class Frame:
    cdef readonly int kind
    cdef readonly object type
    cdef readonly object session_id
    cdef readonly object id
    cdef readonly object method
    cdef readonly object params
    cdef readonly object result
    cdef readonly object error
    cdef readonly object message


@cython.locals(f=Frame)
cdef Frame _frame(int kind, object etype=*, object sid=*, object rid=*, object method=*, object params=*,
                  object result=*, object error=*, object message=*)
@cython.locals(env=dict, payload=dict)
cdef Frame _classify(object msg)
@cython.locals(e=dict)
cpdef object rpc_error(object err)
cdef object _rpc_error_fields(object code, object msg, object data)
@cython.locals(icode=long)
cdef object _new_rpc_error(object code, object message, object data)
@cython.locals(item=dict)
cdef object _content_text(object content)
cdef object _tool_error(object content)
@cython.locals(item=dict)
cdef Image _image(object content)
cdef object _auto_text(str text)
@cython.locals(d=dict)
cdef object _auto_item(object item)
@cython.locals(f=double)
cdef object _decode_text_kind(object content, int kind)
cdef str _preview(str text)
cdef object _undecodable(object exc)
@cython.locals(res=dict, item=dict, items=list, s=str, content=object, first=object, text=object)
cpdef object decode_result(object result, int kind)
@cython.locals(n=Py_ssize_t, i=Py_ssize_t, neg=bint, v="long long", c=Py_UCS4)
cdef object _plain_int(str s)
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
cdef extern from "string.h":
    const void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen)
cdef bint _has_error_key(bytes data)
cdef Py_ssize_t _HEADS_MAX


cdef class RpcSession:
    cdef list _slots
    cdef Pending _slot0
    cdef long long _mask
    cdef Py_ssize_t _live
    cdef Py_ssize_t _fast_live
    cdef dict _extra
    cdef bint _timed
    cdef readonly long long next_id
    cdef readonly long long last_id
    cdef public long long stale
    cdef readonly object session_id
    cdef bytes _env_open
    cdef bytes _env_close
    cdef bytes _req_open
    cdef bytes _call_close

    cdef _set_framing(self, object session_id)
    cdef long long _take_id(self)
    @cython.locals(rid="long long")
    cdef long long _ring_index(self, object request_id) except -2
    @cython.locals(old=list, n=Py_ssize_t, mask="long long", slots=list, p=Pending, i=Py_ssize_t)
    cdef _grow(self)
    @cython.locals(p=Pending, q=Pending)
    cdef Pending _put(self, object request_id, object future, int kind)
    @cython.locals(p=Pending, n=Py_ssize_t)
    cdef Pending _put_rid(self, long long rid, object future, int kind)
    @cython.locals(i="long long", rid="long long", p=Pending)
    cdef Pending _find(self, object request_id)
    @cython.locals(i="long long", rid="long long", p=Pending)
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
    @cython.locals(p=Pending, kind=int, s=str, rid=object)
    cdef bint _feed_reply(self, object data) except -1


cdef class Deadlines:
    cdef object _loop
    cdef object _time
    cdef public double resolution
    cdef dict _buckets
    cdef long long _last
    cdef object _handle
    cdef list _sessions
    cdef double _next_due

    @cython.locals(res=double, tick="long long", bucket=list)
    cpdef add(self, double timeout, object owner, object request_id, object what, object pending=*)
    @cython.locals(p=Pending, due=double)
    cpdef add_call(self, RpcSession session, long long request_id, double timeout, object owner, object what)
    cdef _start(self)
    @cython.locals(n=Py_ssize_t, s=RpcSession, p=Pending)
    cdef Py_ssize_t _count_timed(self)
    @cython.locals(t=double, now="long long", tick="long long", buckets=dict, due=list, entry=tuple)
    cpdef _sweep(self)
    @cython.locals(keep=list, n=Py_ssize_t, s=RpcSession)
    cpdef Py_ssize_t prune(self)
    @cython.locals(s=RpcSession)
    cpdef close(self)
    @cython.locals(keep=list, expired=list, nxt=double, s=RpcSession, p=Pending, entry=tuple)
    cdef _scan(self, double t)


cdef object _deadlines
cdef object _CancelledError

cdef bytes _start_call(RpcSession session, Deadlines deadlines, object owner, str name, object arguments,
                       object fut, int kind, double timeout)


cdef class CallSite:
    cdef readonly RpcSession session
    cdef readonly Deadlines deadlines
    cdef readonly object owner
    cdef object _create_future
    cdef object _send_now
