"""Known-epsilon benchmark: prototypes, mechanisms with exact references, oracle tests."""
