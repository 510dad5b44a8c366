"""The sample region: records decoded into columns and a stack prefix tree."""
