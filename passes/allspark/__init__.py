"""Allspark: orchestration of vision transformers on a processing-in-memory mesh.

See ``docs/guide/allspark.md``; the entry point is
:func:`steplus.passes.allspark.orchestrate.orchestrate`.
"""
