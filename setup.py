"""The one compiled part: mbarrier.ptx._plainline, the parser's innermost step in C (fastpath.py holds the
same in Python, used where no C compiler is at hand or MBARRIER_PURE_PYTHON=1; bench/parse.py reports
which one ran). optional=True: a failed build leaves the Python version, never a failed install."""

from setuptools import Extension, setup

FLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers"]
setup(ext_modules=[Extension("mbarrier.ptx._plainline", ["src/mbarrier/ptx/_plainline.c"], optional=True,
                             extra_compile_args=FLAGS)])
