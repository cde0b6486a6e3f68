"""Broker images are built locally (docker/build-images.sh); find them or say how to build."""

from __future__ import annotations

from pathlib import Path

import docker
from docker.errors import ImageNotFound

from harness.errors import ImageMissingError

IMAGE_REPO = "kafka-chaos/kafka"
VERSIONS_FILE = Path(__file__).resolve().parents[2] / "docker" / "versions.txt"


def image_tag(version: str) -> str:
    return f"{IMAGE_REPO}:{version}"


def built_versions() -> list[str]:
    """Versions the recipe builds by default (docker/versions.txt)."""
    if not VERSIONS_FILE.exists():
        return []
    lines = VERSIONS_FILE.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def require_image(client: docker.DockerClient, version: str) -> str:
    """The image tag for `version`; a clear error if it was never built."""
    tag = image_tag(version)
    try:
        client.images.get(tag)
    except ImageNotFound:
        raise ImageMissingError(
            f"no broker image {tag}: build it with 'docker/build-images.sh {version}' "
            f"(make setup builds {', '.join(built_versions()) or 'the versions in docker/versions.txt'})"
        ) from None
    return tag
