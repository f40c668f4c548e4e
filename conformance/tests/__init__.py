"""The conformance tests, one module a profile; each test names its clause (SPEC Part A)."""
