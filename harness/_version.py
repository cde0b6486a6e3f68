"""The one place the version is written: pyproject.toml reads it (setuptools `attr`), and
`harness --version` prints it."""

__version__ = "0.2.0.dev0"
