"""The node catalogue and the pipeline document (built on `engine`; never imports Qt)."""
