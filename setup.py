"""Build hook: installing onion (``pip install .`` or ``pip install -e .``) runs its code generator.

onion/_generated (bindings, kernels, type stubs) is not in git.  Import would write it on
first use, but a wheel must ship it and type checkers read the stubs without importing
anything, so ``build_py`` (which setuptools runs for wheels and for PEP 660 editable
installs alike) writes it first.  The generator runs as ``python -m onion.codegen`` in a
child process: under ``-m`` the package defers loading the generated code, and the child
sees the same build environment as this one.
"""
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
GENERATED = "onion._generated"


class build_py_with_codegen(build_py):
    def run(self):
        subprocess.run([sys.executable, "-m", "onion.codegen"], cwd=ROOT, check=True)
        # a fresh checkout had no onion/_generated when the package list was found
        if self.packages is not None and GENERATED not in self.packages:
            self.packages.append(GENERATED)
        self.__dict__.pop("data_files", None)       # recomputed with the generated files in it
        super().run()


setup(cmdclass={"build_py": build_py_with_codegen})
