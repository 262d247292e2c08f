"""PTX front end: grammar (``grammar.lark``), parser into the IR, opcode tables and semantics."""
