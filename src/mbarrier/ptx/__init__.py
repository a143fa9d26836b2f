"""The PTX front end: lexer, parser, syntax tree, validator and diagnostics."""
