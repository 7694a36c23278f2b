# Cython declarations for runtime/deadlines.py (pure-Python mode).
cimport cython
from mcpgen.runtime.rpcsession cimport Pending, RpcSession

cdef double _INF


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
