"""The API routers, collected by ``keel.api.app``."""
