# Cython declarations for runtime/core/validate.py (pure-Python mode).

cdef object _INF
cdef dict _PATTERNS
cdef dict _TYPE_CODES
cdef object _RE2_OPTIONS
cdef object _UNANCHORED

cpdef str _kind(object v)
cdef object _type_error(str name, object v, str expected)
cdef bint _is_num(object v)
cdef bint _in_enum(object v, tuple enum)


cdef class LinearPattern:
    cdef readonly str pattern
    cdef readonly Py_ssize_t program_size
    cdef readonly Py_ssize_t max_subject
    cdef object _match
    cdef object _search

    cpdef bint matches(self, str text) except -1
    cpdef check(self, str name, str text)


cdef class _Defs:
    cdef public dict schemas
    cdef public dict objects

    cpdef object resolve(self, object schema, int depth)
    cpdef object object_for(self, object schema, int depth)


cdef class _Object:
    cdef public dict props
    cdef public tuple required
    cdef public tuple defaults
    cdef public bint allow_additional

    cpdef fill(self, object schema, _Defs defs, int depth, bint allow_additional)
    cpdef dict check(self, dict value)


cdef bint _is_object_schema(object schema)


cdef class _Prop:
    cdef public str name
    cdef public _Object obj
    cdef public tuple types
    cdef public int type_code
    cdef public bint has_lo
    cdef public bint has_hi
    cdef public object lo
    cdef public object hi
    cdef public bint lo_exclusive
    cdef public bint hi_exclusive
    cdef public Py_ssize_t max_length
    cdef public Py_ssize_t min_length
    cdef public object enum
    cdef public LinearPattern pattern

    cpdef object check(self, object v)
    cdef int _pick_type(self, object v) except -1
    cdef object _check_range(self, object v)


cdef class ObjectChecker:
    cdef public _Object obj

    cpdef dict check(self, str name, object v)


cdef class SchemaValidator:
    cdef readonly dict props
    cdef readonly tuple defaults
    cdef readonly tuple required
    cdef readonly bint allow_additional
    cdef readonly dict schema

    cpdef dict validate(self, object arguments)
