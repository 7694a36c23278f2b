# Cython declarations for runtime/links/mqtt/mqttwire.py (pure-Python mode).
cimport cython

cdef int _PUBLISH_QOS0
cdef bytes _NO_PROPERTIES


cdef class Publish:
    cdef readonly str topic
    cdef readonly bytes payload
    cdef readonly bint retain
    cdef readonly object CorrelationData
    cdef readonly object ResponseTopic


@cython.locals(n=Py_ssize_t, i=Py_ssize_t, length=Py_ssize_t, shift=int, b=int, end=Py_ssize_t)
cpdef Py_ssize_t packet_end(bytes buf, Py_ssize_t pos)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, length=Py_ssize_t, shift=int, b=int)
cpdef Py_ssize_t packet_length(bytes buf, Py_ssize_t pos)

@cython.locals(value=Py_ssize_t, shift=int, b=int)
cdef tuple _varint(bytes buf, Py_ssize_t i, Py_ssize_t end)

@cython.locals(cmd=int, i=Py_ssize_t, tlen=Py_ssize_t, plen=Py_ssize_t, pend=Py_ssize_t, pid=int,
               n=Py_ssize_t, topic=str, correlation=object, response_topic=object, msg=Publish)
cpdef object decode_publish(bytes buf, Py_ssize_t start, Py_ssize_t end)

@cython.locals(t=bytes, tlen=Py_ssize_t, props=bytes, remaining=Py_ssize_t, head=bytearray, k=Py_ssize_t,
               b=int)
cpdef bytes publish_packet(str topic, bytes payload, object properties)
