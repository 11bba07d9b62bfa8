"""Packaging: pyproject.toml has everything but one step - a wheel carries the case table.

The table lives at the top of the repository (``cases/``, ``snapshots/``), where people read and
edit it; ``build_py`` copies both into ``conformance/data/`` of the build, so an installed
``conformance`` finds them (``conformance/table.py``). An editable install reads the source tree's.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
TABLE = ("cases", "snapshots")


class BuildWithTable(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "conformance" / "data"
        for name in TABLE:
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))


setup(cmdclass={"build_py": BuildWithTable})
