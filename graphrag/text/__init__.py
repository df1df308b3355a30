"""Text in: documents, tokens and embeddings."""
