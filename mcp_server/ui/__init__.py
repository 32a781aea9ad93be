"""The browser view of a project's memory: Starlette pages over the same memory as MCP.

- :mod:`.app`: the routes and :class:`~.app.UiOptions`;
- :mod:`.pages`: the read-only pages; :mod:`.views`: what they read from the memory;
- :mod:`.writes`: remember and forget (``--allow-writes``, form token, item version);
- :mod:`.guard`: loopback, ``Host`` header, access token, security headers;
- :mod:`.chart`: the status page's SVG of recall latency and calls;
- :mod:`.server`: the view's thread beside ``octomem serve``, and ``octomem ui``;
- ``templates/`` (Jinja2) and ``static/`` (one stylesheet, one small script).
"""
