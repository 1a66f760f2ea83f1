"""Zero to JupyterHub's values (deploy/z2jh/values.yaml) start each participant's server as the
one-machine hub does (labkit/hub/config.py): the same lean server, kernel and environment. They
are not deployed here, so this is what keeps them from drifting apart."""

from __future__ import annotations

from pathlib import Path

import yaml

from labkit.hub import config

ROOT = Path(__file__).resolve().parents[1]
HOME = Path("/home/jovyan")  # where repo2docker copies the repository, labkit's lean kernel too


def values() -> dict:
    return yaml.safe_load((ROOT / "deploy" / "z2jh" / "values.yaml").read_text())


def test_the_kubernetes_servers_start_as_lean_as_the_hubs_own():
    assert values()["hub"]["config"]["Spawner"]["args"] == config.LEANER


def test_the_kubernetes_servers_have_the_hubs_environment_and_its_lean_kernel():
    environment = values()["singleuser"]["extraEnv"]
    assert {**config.MALLOC, **config.ONE_SERVER}.items() <= environment.items()
    kernels = HOME / config.KERNELS.relative_to(ROOT)
    assert environment["JUPYTER_PATH"] == str(kernels)
    assert (config.KERNELS / "kernels" / "python3" / "kernel.json").exists()


def test_the_kubernetes_servers_are_the_hubs_lean_server():
    assert values()["singleuser"]["cmd"] == ["python", *config.SERVER[1:]]
