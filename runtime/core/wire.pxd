# Cython declarations for runtime/core/wire.py (pure-Python mode). The functions without a
# leading underscore are cimported by rpcsession.pxd (C calls across the modules).
cimport cython

cdef object _loads
cdef object _dumps
cdef object _JSONDecodeError
cdef extern from *:
    """
    /* An exception of `type` with these args, __init__ not run: the type's own tp_new
       (BaseException's), called directly instead of through BaseException.__new__. */
    static PyObject *mcpgen_exc_new(PyObject *type, PyObject *args) {
        return ((PyTypeObject *)type)->tp_new((PyTypeObject *)type, args, NULL);
    }
    """
    object _exc_new "mcpgen_exc_new"(object type, tuple args)
cdef double _INF
cdef bint _COMPILED

cdef int _K_RAW, _K_AUTO, _K_NONE, _K_BOOLEAN, _K_INTEGER, _K_NUMBER, _K_STRING, _K_OBJECT, _K_IMAGE
cdef int _K_AUDIO, _K_RESOURCE, _K_CONTENT
cdef int _F_INVALID, _F_REQUEST, _F_NOTIFICATION, _F_RESULT, _F_ERROR, _F_OTHER


cdef class _Base64Media:
    cdef readonly str mime_type
    cdef readonly str data_base64
    cdef object _data


cdef class Image(_Base64Media):
    pass


cdef class Audio(_Base64Media):
    pass


cdef class EmbeddedResource:
    cdef readonly str uri
    cdef readonly str mime_type
    cdef readonly object text
    cdef readonly object blob_base64


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
cdef Frame new_frame(int kind, object etype=*, object sid=*, object rid=*, object method=*, object params=*,
                     object result=*, object error=*, object message=*)
@cython.locals(env=dict, payload=dict)
cdef Frame classify(object msg)
@cython.locals(e=dict)
cpdef object rpc_error(object err)
cdef object rpc_error_fields(object code, object msg, object data)
cdef object _new_rpc_error(object code, object message, object data)
@cython.locals(item=dict)
cdef object _content_text(object content)
cdef object _tool_error(object content)
@cython.locals(item=dict)
cdef Image _image(object content)
@cython.locals(item=dict)
cdef Audio _audio(object content)
@cython.locals(item=dict, r=dict)
cdef EmbeddedResource _embedded(object content)
@cython.locals(d=dict)
cdef object _content_item(object item)
cdef tuple _content(object content)
cdef object _auto_text(str text)
@cython.locals(d=dict)
cdef object _auto_item(object item)
@cython.locals(f=double)
cdef object _decode_text_kind(object content, int kind)
cdef str _preview(str text)
cdef object undecodable(object exc)
@cython.locals(res=dict, item=dict, items=list, content=object, first=object, text=object)
cpdef object decode_result(object result, int kind)
@cython.locals(n=Py_ssize_t, i=Py_ssize_t, neg=bint, v="long long", c=Py_UCS4)
cdef object plain_int(str s)
cdef object text_scalar(str s, int kind)
