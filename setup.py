"""Installs the top-level folders engine/, nodes/, app/ and resources/ under one import name.

The folders stay at the top of the repository; the distribution maps each onto
`pixelweave.<folder>`, so an installed Pixelweave adds only `pixelweave` to the import
namespace. Everything else about the package is in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = ("engine", "nodes", "app")

package_dir = {"pixelweave": "pixelweave", "pixelweave.resources": "resources"}
packages = ["pixelweave", "pixelweave.resources", "pixelweave.resources.examples", "pixelweave.resources.images",
            "pixelweave.resources.icons"]
for folder in FOLDERS:
    package_dir[f"pixelweave.{folder}"] = folder
    packages.append(f"pixelweave.{folder}")
    packages += [f"pixelweave.{folder}.{sub}" for sub in find_packages(folder)]

setup(
    package_dir=package_dir,
    packages=packages,
    package_data={
        "pixelweave.resources.examples": ["*.json"],
        "pixelweave.resources.images": ["*.png", "*.jpg", "*.md"],
        "pixelweave.resources.icons": ["*.svg"],  # a link to packaging's icon, for the window
        "pixelweave.nodes.lift": ["include/*.h"],
    },
)
