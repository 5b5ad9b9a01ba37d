"""setup.py — only to record, in the installed package, the repository's build folder it was
installed from (hloc/_install.py), so that an installed `import hloc` finds build/hloc
without HLOC_PREFIX.  Everything else is in pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class build_py_with_prefix(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "hloc", "_install.py")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as f:
            f.write('"""Written by setup.py at install time."""\n')
            f.write("BUILD_DIR = %r\n" % os.path.normpath(os.path.join(HERE, "..", "build")))


setup(cmdclass={"build_py": build_py_with_prefix})
