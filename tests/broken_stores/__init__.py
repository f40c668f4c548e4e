"""Deliberately broken durable stores: negative controls for the storage profile.

Each module's ``factory`` is the reference store target with one behaviour broken;
``compaction-suite check tests.broken_stores.<name>:factory --profile storage`` must
fail the clause named in its ``EXPECTED``.
"""
