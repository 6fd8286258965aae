"""xcc.frontend: the Lark LALR parser for PTX and its typed syntax tree."""
