"""Profiles from a whole fleet: many files as one Parquet dataset, aggregated on Dask.

* :mod:`.ids`: stable 64-bit ids of strings, frames and stacks (hashes of their text), so
  that files written independently concatenate and group without a shared dictionary;
* :mod:`.partials`: the small per-file partial results (counts per stack, per function)
  and how they add up;
* :mod:`.layout`, :mod:`.tables`, :mod:`.dataset`: the Parquet dataset (pyarrow):
  versioned layout, ``add`` one file at a time in bounded memory, read back;
* :mod:`.cluster`: Dask collections over files or the dataset, and the fleet-wide
  ``top``, ``merge`` and ``diff`` as tree reductions (needs dask);
* :mod:`.storage`: local paths or fsspec URLs.

Needs the ``fleet`` extra (pyarrow, dask, fsspec; DuckDB reads the dataset too). See
docs/fleet.md. Nothing is imported here, so that each part loads only what it needs.
"""
