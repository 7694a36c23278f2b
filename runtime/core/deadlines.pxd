# Cython declarations for runtime/core/deadlines.py (pure-Python mode).
cimport cython
from mcpgen.runtime.core.rpcsession cimport Pending, RpcSession

cdef double _INF
cpdef double effective_timeout(object timeout) except? -2


cdef class Deadlines:
    cdef object _loop
    cdef object _time
    cdef readonly object create_future
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
cdef object _Future, _future_done, _future_result

cdef bytes _start_call(RpcSession session, Deadlines deadlines, object owner, str name, object arguments,
                       object fut, int kind, double timeout)


cdef class CallSite:
    cdef readonly RpcSession session
    cdef readonly Deadlines deadlines
    cdef readonly object owner
    cdef object _create_future
    cdef object _transport
    cdef public bint closed
    cdef public double timeout


cdef int _NEW, _WAITING, _DONE


@cython.final
cdef class PendingCall:
    cdef CallSite site
    cdef str name
    cdef object arguments
    cdef int kind
    cdef double timeout
    cdef int state
    cdef long long rid
    cdef object fut


@cython.locals(c=PendingCall)
cdef PendingCall _new_call(CallSite site, str name, object arguments, int kind, object timeout)
@cython.locals(site=CallSite, session=RpcSession, deadlines=Deadlines, data=bytes, rid="long long",
               exact=bint)
cdef object _pending_step(PendingCall call)
cdef bint _pending_done(PendingCall call) noexcept
@cython.locals(site=CallSite)
cdef void _cancel_call(PendingCall call) except *


cdef extern from *:
    """
    /* PendingCall's am_send slot (deadlines.py says why): the interpreter's `await`
       asks it for the next step and gets PYGEN_NEXT with the future to wait on, or
       PYGEN_RETURN with the call's result, without raising StopIteration. */
    typedef PyObject *(*mcpgen_step_fn)(PyObject *);
    typedef int (*mcpgen_done_fn)(PyObject *);
    static mcpgen_step_fn mcpgen_pending_step = NULL;
    static mcpgen_done_fn mcpgen_pending_done = NULL;
    static PySendResult mcpgen_pending_send(PyObject *self, PyObject *arg, PyObject **result) {
        (void)arg;
        PyObject *r = mcpgen_pending_step(self);
        *result = r;
        if (r == NULL) return PYGEN_ERROR;
        return mcpgen_pending_done(self) ? PYGEN_RETURN : PYGEN_NEXT;
    }
    static int mcpgen_install_send_impl(PyObject *cls, mcpgen_step_fn step, mcpgen_done_fn done) {
        PyTypeObject *t = (PyTypeObject *)cls;
        if (t->tp_as_async == NULL) {
            PyErr_SetString(PyExc_TypeError, "PendingCall has no async slots");
            return -1;
        }
        mcpgen_pending_step = step;
        mcpgen_pending_done = done;
        t->tp_as_async->am_send = mcpgen_pending_send;
        return 0;
    }
    #define mcpgen_install_send(cls, step, done) \
        mcpgen_install_send_impl((cls), (mcpgen_step_fn)(step), (mcpgen_done_fn)(done))
    """
    int _install_send "mcpgen_install_send"(object cls, object (*step)(PendingCall),
                                            bint (*done)(PendingCall) noexcept) except -1
