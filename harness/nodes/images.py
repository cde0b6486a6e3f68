"""Broker images are built locally (docker/build-images.sh); find them or say how to build.

And the Docker engine they run on (`docker_client`), or how to get one."""

from __future__ import annotations

from pathlib import Path

import docker
from docker.errors import DockerException, ImageNotFound

from harness.errors import HarnessError, ImageMissingError
from harness.nodes.versions import DEFAULT_VERSIONS_FILE, default_versions

IMAGE_REPO = "kafka-chaos/kafka"
VERSIONS_FILE: Path = DEFAULT_VERSIONS_FILE


def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        raise HarnessError(
            f"no Docker engine answers ({exc}); run 'make setup' (it starts one on Debian as root) "
            "or start Docker yourself"
        ) from None
    return client


def image_tag(version: str) -> str:
    return f"{IMAGE_REPO}:{version}"


def built_versions() -> list[str]:
    """Versions the recipe builds by default (docker/versions.txt: what make setup builds)."""
    return default_versions()


def image_exists(client: docker.DockerClient, version: str) -> bool:
    """True when the broker image of `version` is on this machine."""
    try:
        client.images.get(image_tag(version))
    except ImageNotFound:
        return False
    return True


def require_image(client: docker.DockerClient, version: str) -> str:
    """The image tag for `version`; a clear error if it was never built."""
    tag = image_tag(version)
    if not image_exists(client, version):
        raise ImageMissingError(
            f"no broker image {tag}: build it with 'make images VERSIONS={version}' "
            f"(make setup builds {', '.join(built_versions()) or 'the versions in docker/versions.txt'})"
        )
    return tag
