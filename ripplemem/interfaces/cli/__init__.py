"""The ``ripplemem`` command line: the parser and commands (`main`), their output, the demo."""
