"""Building the index: loading, chunking, extraction, entity resolution, communities, embedding."""
