# Cython declarations for runtime/codec.py (pure-Python mode).
cimport cython

cdef object _loads
cdef object _dumps
cdef object _JSONDecodeError
cdef object _fast_decode
cdef object _FastError
cdef bytes _EMPTY
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


cdef class RpcSession:
    cdef readonly dict pending
    cdef readonly long long next_id
    cdef readonly long long last_id
    cdef public long long stale
    cdef dict _heads
    cdef readonly object session_id
    cdef bytes _env_open
    cdef bytes _env_close
    cdef bytes _req_open
    cdef bytes _call_close

    cdef _set_framing(self, object session_id)
    cdef long long _take_id(self)
    @cython.locals(head=bytes, rid="long long")
    cpdef bytes tools_call(self, str name, object arguments)
    @cython.locals(rid="long long")
    cpdef bytes request(self, str method, object params=*)
    @cython.locals(p=Pending)
    cpdef expect(self, object request_id, object future, int kind)
    @cython.locals(p=Pending)
    cpdef bytes call(self, str name, object arguments, object future, int kind)
    @cython.locals(p=Pending)
    cpdef bint fail(self, object request_id, object exc)
    @cython.locals(p=Pending, msg=dict, payload=dict)
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

    @cython.locals(res=double, tick="long long", bucket=list)
    cpdef add(self, double timeout, object owner, object request_id, object what, object pending=*)
    @cython.locals(now="long long", tick="long long", buckets=dict, due=list, entry=tuple)
    cpdef _sweep(self)


cdef object _deadlines
cdef object _CancelledError
