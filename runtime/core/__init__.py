"""The compiled floor: what every connection runs per frame, whatever the transport.

``wire`` (the xiaozhi envelope and JSON-RPC frames), ``rpcsession`` (request ids and the
pending-reply table), ``deadlines`` (call deadlines and the compiled ``tools/call`` path),
``validate`` (argument validation) are compiled by Cython; ``codec`` re-exports the first
three under one name; ``stock_replies`` and ``loop`` are the small rules they stand on.
Nothing here imports a session, a link, the bridge or the console.
"""
