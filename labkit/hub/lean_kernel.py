"""A participant's kernel under the workshop hub: ipykernel without its debugger.

ipykernel loads debugpy (pydevd) into every kernel for JupyterLab's debugger panel, about 8 MB
of PSS a kernel, measured; a workshop never opens that panel. The hub's servers find this
kernel as `python3` (hub/jupyter/kernels/python3, first on their $JUPYTER_PATH).
"""

import sys


def main() -> None:
    sys.modules["debugpy"] = None  # ipykernel then finds no debugger and starts without one
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":  # imported (every labkit module is, in a test), it does nothing
    main()
