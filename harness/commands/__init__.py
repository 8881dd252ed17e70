"""One module per CLI verb, each with HELP, EXAMPLES, add_arguments(parser) and run(args) -> int."""
