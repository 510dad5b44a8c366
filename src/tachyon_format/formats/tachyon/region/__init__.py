"""The sample region: records decoded into columns and a stack prefix tree.

Read in this order:

* :mod:`.scan`: the reference decoder, one record at a time, with CPython's checks; the
  record semantics in one short module. Everything else makes the same arrays faster.
* :mod:`.records`, :mod:`.threads`, :mod:`.columns`: what the stages hand each other (record
  batches, the thread table and its per-thread state, the output columns).
* :mod:`.decoder`: the vectorised decoder's driver (windows, helper thread, fallback to
  :func:`.scan.scan_record`), over :mod:`.discover` (finding records) and :mod:`.commit`
  (what they mean);
* :mod:`.stack_tree` (the prefix tree, built without a loop per level) over
  :mod:`.path_hash` (its path hashes).

Imports go one way, down this list (``scan`` uses only ``records``, ``threads`` and
``columns``); nothing here imports the file-level reader, writer or ``cpython_api``.
"""
