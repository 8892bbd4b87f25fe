"""The API routers, collected by ``api.app``."""
