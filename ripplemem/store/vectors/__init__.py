"""Vector indexes: the protocol (`base`), embedded Chroma and its health checks, a Chroma server,
the image/audio indexes (`modality_index`)."""
