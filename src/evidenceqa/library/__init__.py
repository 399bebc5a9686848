"""The library: documents ingested into the catalogue, its vocabulary, and the index kept in step."""
