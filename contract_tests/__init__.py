"""Contract suite of the shop service: checks any implementation (a URL) against openapi/openapi.yaml."""
