"""The site build engine (side effects): snapshot, forked children, MkDocs, run page staging, downloads."""
