"""The ``Device`` API: one MCP session with one device, over any link.

``device`` (the handle), ``session_setup`` (what happens before the first call),
``options`` (the limits every front door holds sessions to), ``shared`` (what devices of one
firmware report alike), ``events``, ``resources``, ``fanout`` (one call on many devices),
``compat`` (which spec versions a backend serves), ``llm`` (tools as LLM function
definitions). It stands on ``core/`` and knows no transport.
"""
