"""What the default storage (the local disk or S3) holds under a folder, alike on both."""

from __future__ import annotations

from django.core.files.storage import default_storage


def folder_listing(folder: str) -> tuple[list[str], list[str]]:
    """(subfolders, files) directly under `folder`, empty when nothing is stored there. Listed, never
    asked `exists` first: on S3 a folder exists only by its files, and `exists("jobs/")` is False
    however many it holds."""
    try:
        subfolders, files = default_storage.listdir(folder)
    except FileNotFoundError:  # the local disk, before anything was stored there
        return [], []
    return list(subfolders), list(files)
