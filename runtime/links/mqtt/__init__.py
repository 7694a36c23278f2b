"""Devices over an MQTT 5 broker: ``gateway`` (one backend), ``fleet`` (backend workers
sharing one fleet), ``broker`` (the kept-up client connection), ``mqttfast`` and the compiled
``mqttwire`` (its QoS 0 fast path)."""
