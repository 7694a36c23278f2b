"""The rules of the spec format, by family, and the editor JSON Schema made from their tables.

| module | checks |
|---|---|
| ``tables`` | the key lists, accepted values, habitual spellings and hints (data only) |
| ``base`` | reporting and reading mappings, lists and typed scalars |
| ``top`` | the document: ``device`` and ``tools``; ``SpecChecker`` builds the model |
| ``tools`` | one tool: keys, name, handler, annotations |
| ``params`` | a tool's parameters |
| ``returns`` | a tool's return value and its fields |
| ``cross`` | across tools: duplicates, consumer-name collisions, page sizes |
| ``events`` / ``resources`` | the ``events:`` and ``resources:`` sections |
| ``firmware`` | the ``firmware:`` settings of the ESP32 build, resolving ``!secret`` |
| ``names`` | which names are usable in C++ and Python |
| ``schema`` | ``toolspec.schema.json`` for editors, generated from ``tables`` |
"""

from mcpgen.codegen.spec.rules.names import device_name_problem
from mcpgen.codegen.spec.rules.top import SpecChecker

__all__ = ["SpecChecker", "device_name_problem"]
