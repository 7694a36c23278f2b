"""Emitters: the spec model -> files (C++ tables, Python bindings, xiaozhi glue, docs).

Each emitter is a pure function of the model; only ``writer`` touches the disk.
Imports ``mcpgen.codegen.spec`` only.
"""
