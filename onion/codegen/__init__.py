"""onion's code generator (torchgen's role): YAML in, Python in onion/_generated out."""
