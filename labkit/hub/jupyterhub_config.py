"""The file `jupyterhub -f` reads: all of it is labkit.hub.config, from settings.json."""

from labkit.hub.config import configure

config = globals().get("c")  # JupyterHub's config object; imported as a module, there is none
if config is not None:
    configure(config)
