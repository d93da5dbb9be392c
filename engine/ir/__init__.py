"""The algorithm language: types, expressions, Funcs, reduction domains and inputs."""
