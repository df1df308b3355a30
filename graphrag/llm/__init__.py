"""Every call to a model: the client, checked replies, the recorded cache, streaming, usage."""
