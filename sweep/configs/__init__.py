"""Sweep tags: one TOML file per tag (kept a package so installs ship the files)."""
