"""Devices over WebSocket: ``gateway`` (the server devices dial, xiaozhi's protocol) and
``wslink`` (its compiled per-frame listener)."""
