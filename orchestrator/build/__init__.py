"""Build stage (side effects): engine builds into the keyed build cache, patches, the harness, images."""
