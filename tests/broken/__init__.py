"""Deliberately broken compactors: negative controls the conformance suite must reject.

Each factory in `compactors` is the reference with exactly one defect; `CONTROLS`
names the clause that must catch it and the profiles to run.
"""
