"""One test per validation rule: the message, the field path and the position."""

from __future__ import annotations

import pytest

CASES = [
    pytest.param(
        """
        device:
          name: t
          version: "1"
        tools:
          - name: self.a
            description: d
            titel: A
        """,
        7,
        5,
        "tools[0].titel",
        "unknown key `titel`",
        "did you mean `title`?",
        id="unknown-key-misspelt",
    ),
    pytest.param(
        """
        device:
          name: t
          version: "1"
          descripton: a lamp
        tools:
          - name: self.a
            description: d
        """,
        4,
        3,
        "device.descripton",
        "unknown key `descripton`",
        "did you mean `description`?",
        id="unknown-device-key",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            parameters:
              x: {type: integer}
        """,
        5,
        5,
        "tools[0].parameters",
        "unknown key `parameters`",
        "did you mean `params`?",
        id="unknown-key-alias",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              s: {type: string, min: 1}
        """,
        6,
        25,
        "tools[0].params.s.min",
        "unknown key `min`",
        "`min` applies to integer and number parameters only, this one is string",
        id="key-not-applicable-to-type",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: integer, max_length: 3}
        """,
        6,
        26,
        "tools[0].params.n.max_length",
        "unknown key `max_length`",
        "`max_length` applies to string parameters only, this one is integer",
        id="max-length-on-integer",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n:
                type: integer
                min: true
        """,
        8,
        14,
        "tools[0].params.n.min",
        "expected an integer, got boolean true",
        "",
        id="bool-is-not-an-integer",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: 42
        """,
        4,
        18,
        "tools[0].description",
        "expected a string, got integer 42",
        'quote it: "42"',
        id="number-is-not-a-string",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            user_only: yes
        """,
        5,
        16,
        "tools[0].user_only",
        "expected true or false, got string 'yes'",
        "YAML 1.2",
        id="yes-is-not-a-boolean",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params: [x, y]
        """,
        5,
        13,
        "tools[0].params",
        "expected a mapping of parameter name to parameter, got a list",
        "",
        id="params-not-a-mapping",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            title: A
        """,
        3,
        5,
        "tools[0]",
        "missing required key `description`",
        "add `description: ...`",
        id="missing-tool-description",
    ),
    pytest.param(
        """
        device:
          name: t
        tools:
          - name: self.a
            description: d
        """,
        2,
        3,
        "device",
        "missing required key `version`",
        'add `version: "1.0.0"`',
        id="missing-device-version",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              x: {description: an x}
        """,
        6,
        10,
        "tools[0].params.x",
        "missing required key `type`",
        "boolean, integer, number or string",
        id="missing-param-type",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
          - name: self.b
            description: d
          - name: self.a
            description: again
        """,
        7,
        11,
        "tools[2].name",
        "duplicate tool name `self.a` (first at tools[0], line 3)",
        "must be unique",
        id="duplicate-tool-name",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              volume: {type: integer}
              mute: {type: boolean}
              volume: {type: number}
        """,
        8,
        7,
        "tools[0].params.volume",
        "duplicate key `volume` (first defined on line 6)",
        "YAML keeps only one",
        id="duplicate-param-name",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            description: e
        """,
        5,
        5,
        "tools[0].description",
        "duplicate key `description` (first defined on line 4)",
        "",
        id="duplicate-key",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.set volume
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "tool name `self.set volume` is not a valid MCP tool name: it contains ' '",
        "letters, digits",
        id="tool-name-invalid-character",
    ),
    pytest.param(
        f"""
        device: {{name: t, version: "1"}}
        tools:
          - name: self.{"x" * 124}
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "is 129 characters long (at most 128)",
        "",
        id="tool-name-too-long",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.light__on
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "tool name `self.light__on` contains `__`",
        "LLM function names",
        id="tool-name-double-underscore",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a.b
            description: d
          - name: self.a-b
            description: d
        """,
        5,
        11,
        "tools[1].name",
        "C++ handler `a_b` of `self.a-b` collides with tools[0] `self.a.b`",
        "set `handler:`",
        id="cpp-handler-collision",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.light.set_on
            description: d
            handler: light_set_on_a
          - name: self.light_set.on
            description: d
            handler: light_set_on_b
        """,
        6,
        11,
        "tools[1].name",
        "tool name `self.light_set.on` collides with tools[0] `self.light.set_on` (line 3) as an LLM "
        "function name: both become `self_light_set_on` for the stock xiaozhi-esp32-server (`.` -> `_`)",
        "keeps only one of them, so the other silently disappears; rename one so the names differ in more "
        "than `.` versus `_`, e.g. `self.light_set.on_2`",
        id="stock-xiaozhi-server-name-collision",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a.b
            description: d
          - name: self.a_b
            description: d
        """,
        # Also a C++ handler collision, but `handler:` would not fix it: only the rename is reported.
        5,
        11,
        "tools[1].name",
        "both become `self_a_b` for the stock xiaozhi-esp32-server (`.` -> `_`)",
        "e.g. `self.a_b_2`",
        id="stock-collision-reported-instead-of-handler",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.mode._on
            description: d
            handler: mode_on_a
          - name: self.mode_.on
            description: d
            handler: mode_on_b
        """,
        6,
        11,
        "tools[1].name",
        "collides with tools[0] `self.mode._on` (line 3) as an LLM function name: both become "
        "`self__mode___on` for mcpgen's LLM names (`.` -> `__`); both become `self_mode__on` for the stock",
        "mcpgen would have to give one of them a hashed name",
        id="mcpgen-llm-name-collision",
    ),
    pytest.param(
        f"""
        device: {{name: t, version: "1"}}
        tools:
          - name: self.{"a" * 32}.{"b" * 25}
            description: d
        """,
        3,
        11,
        "tools[0].name",
        f"is too long for LLM function calling: it becomes `self__{'a' * 32}__{'b' * 25}`, 65 characters "
        "for mcpgen's LLM names (`.` -> `__`); LLM APIs accept at most 64",
        "shorten it to at most 62 characters (each `.` counts twice",
        id="llm-name-too-long-after-mapping",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.one
            description: d
            handler: do_it
          - name: self.two
            description: d
            handler: do_it
        """,
        8,
        14,
        "tools[1].handler",
        "C++ handler `do_it` of `self.two` collides with tools[0] `self.one`",
        "",
        id="explicit-handler-collision",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.light_on
            description: d
          - name: self.lightOn
            description: d
        """,
        5,
        11,
        "tools[1].name",
        "C++ arguments struct `LightOnArgs` of `self.lightOn` collides with tools[0]",
        "",
        id="cpp-args-struct-collision",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.light
            description: d
          - name: self.light.on
            description: d
        """,
        5,
        11,
        "tools[1].name",
        "`self.light.on` needs `device.light` as a namespace, but it is the method of tools[0] `self.light`",
        "no tool name may be a dotted prefix of another",
        id="python-path-prefix",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.light.on
            description: d
          - name: self.light
            description: d
        """,
        5,
        11,
        "tools[1].name",
        "the Python method `device.light` of `self.light` is already a namespace of tools[0] `self.light.on`",
        "rename `self.light`",
        id="python-path-prefix-declared-after",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.set-mode
            description: d
            handler: set_mode_dash
          - name: self.set_mode
            description: d
        """,
        6,
        11,
        "tools[1].name",
        "Python binding `device.set_mode` of `self.set_mode` collides with tools[0]",
        "`-` and `_` map to the same Python name",
        id="python-path-collision",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.delete
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "C++ handler name `delete` derived from `self.delete` is a C++ keyword",
        "set `handler:`",
        id="reserved-cpp-derived-handler",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.remove
            description: d
            handler: namespace
        """,
        5,
        14,
        "tools[0].handler",
        "handler `namespace` is a C++ keyword",
        "",
        id="reserved-cpp-explicit-handler",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.remove
            description: d
            handler: 2nd-try
        """,
        5,
        14,
        "tools[0].handler",
        "handler `2nd-try` is not a valid C++ identifier",
        "",
        id="handler-not-identifier",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.module.import
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "segment `import` is a reserved word in Python",
        "",
        id="reserved-python-path-segment",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.3d.print
            description: d
        """,
        3,
        11,
        "tools[0].name",
        "segment `3d` is not a Python identifier",
        "",
        id="python-path-segment-not-identifier",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              class: {type: string}
        """,
        6,
        7,
        "tools[0].params.class",
        "parameter name `class` is a C++ keyword",
        "rename it",
        id="reserved-cpp-param",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              lambda: {type: number}
        """,
        6,
        7,
        "tools[0].params.lambda",
        "parameter name `lambda` is a reserved word in Python",
        "",
        id="reserved-python-param",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              max-speed: {type: number}
        """,
        6,
        7,
        "tools[0].params.max-speed",
        "parameter name `max-speed` is not a valid identifier",
        "",
        id="param-name-not-identifier",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              volume:
                type: integer
                min: 10
                max: 5
        """,
        9,
        14,
        "tools[0].params.volume.max",
        "expected max >= min (10), got 5",
        "swap min and max",
        id="min-greater-than-max",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              level: {type: integer, default: "3"}
        """,
        6,
        39,
        "tools[0].params.level.default",
        "expected an integer default, got string '3'",
        "",
        id="default-wrong-type",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              level: {type: integer, default: 2.0}
        """,
        6,
        39,
        "tools[0].params.level.default",
        "expected an integer default, got number 2.0",
        "write 2",
        id="default-float-for-integer",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              level: {type: integer, min: 0, max: 10, default: 11}
        """,
        6,
        56,
        "tools[0].params.level.default",
        "default 11 is above max (10)",
        "",
        id="default-above-max",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              level: {type: number, min: 0.5, default: 0.25}
        """,
        6,
        48,
        "tools[0].params.level.default",
        "default 0.25 is below min (0.5)",
        "",
        id="default-below-min",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              text: {type: string, max_length: 3, default: abcd}
        """,
        6,
        52,
        "tools[0].params.text.default",
        "default 'abcd' is 4 characters, longer than max_length (3)",
        "",
        id="default-longer-than-max-length",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              theme: {type: string, enum: [light, dark], default: darkk}
        """,
        6,
        59,
        "tools[0].params.theme.default",
        "default 'darkk' is not one of the enum values",
        "did you mean `dark`?",
        id="default-not-in-enum",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              host: {type: string, pattern: "^[a-z]+$", default: Host}
        """,
        6,
        58,
        "tools[0].params.host.default",
        "default 'Host' does not match pattern '^[a-z]+$'",
        "",
        id="default-not-matching-pattern",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              on: {type: boolean, default: null}
        """,
        6,
        36,
        "tools[0].params.on.default",
        "expected a boolean default, got null",
        "remove `default`",
        id="default-null",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              theme:
                type: string
                enum: []
        """,
        8,
        15,
        "tools[0].params.theme.enum",
        "expected a non-empty list of strings, got an empty list",
        "",
        id="empty-enum",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              theme: {type: string, enum: [light, dark, light]}
        """,
        6,
        49,
        "tools[0].params.theme.enum[2]",
        "duplicate enum value 'light' (first at",
        "",
        id="duplicate-enum-value",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, enum: [one, 2]}
        """,
        6,
        37,
        "tools[0].params.n.enum[1]",
        "expected a string, got integer 2",
        'quote it: "2"',
        id="enum-value-not-a-string",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, max_length: 0}
        """,
        6,
        37,
        "tools[0].params.n.max_length",
        "expected an integer >= 1, got 0",
        "",
        id="max-length-zero",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, pattern: "([a-z]"}
        """,
        6,
        34,
        "tools[0].params.n.pattern",
        "invalid regular expression: missing ), unterminated subpattern",
        "",
        id="pattern-does-not-compile",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, pattern: "[[a]"}
        """,
        6,
        34,
        "tools[0].params.n.pattern",
        "invalid regular expression: Possible nested set",
        "",
        id="pattern-warns",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, pattern: "^(?=[a-z])[a-z0-9]+$"}
        """,
        6,
        34,
        "tools[0].params.n.pattern",
        "invalid regular expression: RE2 cannot compile it (invalid perl operator: (?=)",
        "patterns run on RE2 (linear time: no backreferences, lookaround",
        id="pattern-lookahead-not-in-re2",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, pattern: '^(a+)\\1$'}
        """,
        6,
        34,
        "tools[0].params.n.pattern",
        "invalid regular expression: RE2 cannot compile it (invalid escape sequence: \\1)",
        "RE2",
        id="pattern-backreference-not-in-re2",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: string, max_length: 1000, pattern: "^.{1,255}$"}
        """,
        6,
        52,
        "tools[0].params.n.pattern",
        "the pattern (an RE2 program of 2296 instructions) is checked on values of at most 456 characters, "
        "but max_length is 1000",
        "lower max_length or simplify the pattern",
        id="pattern-work-bound-below-max-length",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              n: {type: int}
        """,
        6,
        17,
        "tools[0].params.n.type",
        "expected a parameter type (one of boolean, integer, number, string), got string 'int'",
        "did you mean `integer`?",
        id="param-type-alias",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            returns: object
        """,
        5,
        14,
        "tools[0].returns",
        "an object return needs its properties",
        "type: object, properties",
        id="object-return-without-properties",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            returns: float
        """,
        5,
        14,
        "tools[0].returns",
        "expected a return kind (one of boolean, integer, number, string, image, "
        "audio, resource, none), got string 'float'",
        "did you mean `number`?",
        id="return-kind-alias",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            returns:
              type: object
              properties:
                values: {type: array}
        """,
        8,
        17,
        "tools[0].returns.properties.values",
        "missing required key `items`",
        "add `items:",
        id="array-field-without-items",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            returns:
              type: object
              properties:
                level: {type: integer, items: {type: integer}}
        """,
        8,
        32,
        "tools[0].returns.properties.level.items",
        "unknown key `items`",
        "`items` applies to array fields only",
        id="items-on-non-array-field",
    ),
    pytest.param(
        """
        device:
          name: t
          version: "1"
          protocol_version: 2025-06-19
        tools:
          - name: self.a
            description: d
        """,
        4,
        21,
        "device.protocol_version",
        "expected an MCP protocol version (one of 2024-11-05, 2025-03-26, "
        "2025-06-18, 2025-11-25), got string '2025-06-19'",
        "did you mean `2025-06-18`?",
        id="protocol-version",
    ),
    pytest.param(
        """
        device:
          name: t
          version: true
        tools:
          - name: self.a
            description: d
        """,
        3,
        12,
        "device.version",
        "expected a version string, got boolean true",
        "",
        id="version-bool",
    ),
    pytest.param(
        """
        device:
          name: t
          version: "1"
          page_size: 8000.5
        tools:
          - name: self.a
            description: d
        """,
        4,
        14,
        "device.page_size",
        "expected an integer number of bytes, got number 8000.5",
        "",
        id="page-size-float",
    ),
    pytest.param(
        """
        device:
          name: None
          version: "1"
        tools:
          - name: self.a
            description: d
        """,
        2,
        9,
        "device.name",
        "gives the Python class name `None`, a reserved word",
        "",
        id="device-name-reserved-class",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools: []
        """,
        2,
        8,
        "tools",
        "expected at least one tool",
        "",
        id="no-tools",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
          - self.b
        """,
        5,
        5,
        "tools[1]",
        "expected a tool mapping, got string 'self.b'",
        "",
        id="tool-not-a-mapping",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              true: {type: boolean}
        """,
        6,
        7,
        "tools[0].params",
        "expected a string key, got boolean true",
        'quote it: "true"',
        id="non-string-key",
    ),
    pytest.param(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            progress: often
        """,
        5,
        15,
        "tools[0].progress",
        "expected true or false, got string 'often'",
        "write true or false",
        id="progress-not-a-boolean",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "path", "message", "hint"), CASES)
def test_validation_error(one_error, text, line, column, path, message, hint):
    error = one_error(text)
    assert error.path == path
    assert message in error.message, error.format()
    assert hint in error.hint, error.format()
    assert (error.line, error.column) == (line, column), error.format()


def test_error_names_the_file_as_given(write_spec, monkeypatch, tmp_path):
    from mcpgen.codegen.spec.loader import check_spec

    write_spec(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              volume: {type: integer, min: 0, max: -5}
        """,
        name="lamp.yaml",
    )
    monkeypatch.chdir(tmp_path)
    [error] = check_spec("lamp.yaml")
    assert error.format() == (
        "lamp.yaml:6:44: tools[0].params.volume.max: expected max >= min (0), got -5\n"
        "  5 |     params:\n"
        "  6 |       volume: {type: integer, min: 0, max: -5}\n"
        "    |                                            ^\n"
        "  hint: swap min and max"
    )


def test_every_located_error_shows_its_source_line_with_a_caret(write_spec, monkeypatch, tmp_path):
    """Not only YAML syntax errors: a validation error quotes its line too (docs/cli.md)."""
    from mcpgen.codegen.spec.loader import check_spec

    write_spec(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            descripton: d
        """,
        name="lamp.yaml",
    )
    monkeypatch.chdir(tmp_path)
    errors = check_spec("lamp.yaml")
    assert errors
    for error in errors:
        assert error.line > 0, error.format()
        shown = error.format().splitlines()
        numbered = f"  {error.line} | "
        row = next(i for i, text in enumerate(shown) if text.startswith(numbered))
        assert shown[row + 1].index("^") == len(numbered) + error.column - 1, error.format()


def test_invalid_utf8_shows_the_line_with_a_caret_under_the_bad_byte(tmp_path):
    from mcpgen.codegen.spec.loader import check_spec

    spec = tmp_path / "lamp.yaml"
    spec.write_bytes(b"device: {name: t, version: '1'}\n# caf\xc3\xa9 \xff\ntools: []\n")
    [error] = check_spec(spec)
    assert (error.line, error.column) == (2, 8)
    assert "  2 | # caf\u00e9 \ufffd\n    |        ^" in error.format()


def test_all_errors_of_a_file_are_reported(errors_of):
    errors = errors_of(
        """
        device:
          name: t
          version: "1"
          page_sise: 8000
        tools:
          - name: self.a
            descripton: d
            params:
              level: {type: integer, min: 5, max: 1}
              mode: {type: string, enum: [a, b], default: c}
              on: {type: boolean, default: 1}
          - name: self.a
            description: d
            read_only: "yes"
          - name: bad name
            description: d
            returns: objects
        """
    )
    got = {(e.line, e.path) for e in errors}
    assert got == {
        (4, "device.page_sise"),
        (7, "tools[0].descripton"),  # not also "missing `description`": the hint points at it
        (9, "tools[0].params.level.max"),
        (10, "tools[0].params.mode.default"),
        (11, "tools[0].params.on.default"),
        (12, "tools[1].name"),  # duplicate
        (14, "tools[1].read_only"),
        (15, "tools[2].name"),
        (17, "tools[2].returns"),
    }, "\n".join(e.format() for e in errors)
    # Sorted by position, so the report reads top to bottom.
    assert [e.line for e in errors] == sorted(e.line for e in errors)


def test_page_size_too_small_names_tool_size_and_minimum(errors_of):
    from mcpgen.codegen.spec.loader import load_spec_text
    from mcpgen.codegen.spec.mcp_json import worst_case_page_bytes

    tools = (
        "tools:\n"
        "  - name: self.brief\n"
        "    description: d\n"
        "  - name: self.long_one\n"
        f"    description: {'x' * 300}\n"
    )
    valid = load_spec_text('device: {name: t, version: "1"}\n' + tools)
    needed = worst_case_page_bytes(valid.tool("self.long_one"), valid)
    assert worst_case_page_bytes(valid.tool("self.brief"), valid) < 200 < needed

    errors = errors_of('device:\n  name: t\n  version: "1"\n  page_size: 200\n' + tools)
    assert len(errors) == 1, [e.format() for e in errors]
    error = errors[0]
    assert (error.line, error.column, error.path) == (8, 5, "tools[1]")
    assert f"`self.long_one` needs a {needed}-byte page, more than page_size (200)" in error.message
    assert f"set device.page_size to at least {needed}" in error.hint


def test_page_size_exactly_the_largest_entry_is_enough(write_spec):
    from mcpgen.codegen.spec.loader import check_spec, load_spec
    from mcpgen.codegen.spec.mcp_json import worst_case_page_bytes

    tools = "tools: [{name: self.a, description: d}]\n"
    valid = load_spec(write_spec('device: {name: t, version: "1"}\n' + tools))
    needed = worst_case_page_bytes(valid.tools[0], valid)
    fits = f'device: {{name: t, version: "1", page_size: {needed}}}\n' + tools
    assert check_spec(write_spec(fits)) == []
    too_small = fits.replace(f"page_size: {needed}", f"page_size: {needed - 1}")
    [error] = check_spec(write_spec(too_small))
    assert f"needs a {needed}-byte page" in error.message


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        # Unclosed brackets and quotes point where they open, not where PyYAML noticed.
        pytest.param("device:\n  name: [x\ntools: []\n", 2, 9, "expected ',' or ']'", id="flow-sequence"),
        pytest.param("device:\n\tname: x\n", 2, 1, "found character '\\t'", id="tab"),
        pytest.param("device:\n  name: x\n  version: '1\n", 3, 12, "unexpected end of stream", id="quote"),
        pytest.param("device:\n  name: x\n  version '1'\ntools: []\n", 3, 3, "expected ':'", id="no-colon"),
        pytest.param("a: 1\n---\nb: 2\n", 2, 1, "expected a single document", id="two-documents"),
    ],
)
def test_yaml_syntax_error_has_position(write_spec, text, line, column, fragment):
    from mcpgen.codegen.spec.loader import check_spec

    path = write_spec(text)
    [error] = check_spec(path)
    assert (error.line, error.column) == (line, column), error.format()
    assert error.message.startswith("YAML syntax error")
    assert fragment in error.message
    assert error.format().startswith(f"{path}:{line}:{column}: YAML syntax error")


def test_invalid_utf8_has_position(tmp_path):
    from mcpgen.codegen.spec.loader import check_spec

    path = tmp_path / "bad.yaml"
    path.write_bytes(b"device:\n  name: caf\xe9\n")
    [error] = check_spec(path)
    assert (error.line, error.column) == (2, 12)
    assert "not valid UTF-8" in error.message


def test_empty_file(errors_of):
    [error] = errors_of("# only a comment\n")
    assert (error.line, error.column) == (1, 1)
    assert "the spec is empty" in error.message
    assert "codegen new" in error.hint


def test_missing_file_is_an_error_not_a_crash(tmp_path):
    from mcpgen.codegen.spec.loader import SpecErrors, check_spec, load_spec

    missing = tmp_path / "nope.yaml"
    [error] = check_spec(missing)
    assert error.line == 0 and "cannot read the spec" in error.message
    assert error.format().startswith(f"{missing}: cannot read")
    with pytest.raises(SpecErrors):
        load_spec(missing)


def test_merge_keys_are_refused(one_error):
    error = one_error(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            params:
              x: {type: string}
              <<: {y: {type: string}}
        """
    )
    assert (error.line, error.column, error.path) == (7, 7, "tools[0].params")
    assert "merge keys (`<<`) are not supported" in error.message


def test_recursive_alias_in_fields_is_an_error_not_a_crash(errors_of):
    errors = errors_of(
        """
        device: {name: t, version: "1"}
        tools:
          - name: self.a
            description: d
            returns:
              type: object
              properties: &p
                child: {type: object, properties: *p}
        """
    )
    assert len(errors) == 1
    assert "fields nest deeper than 32 levels" in errors[0].message
    assert errors[0].line == 8
