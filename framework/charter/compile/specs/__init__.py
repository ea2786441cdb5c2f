"""The compiled spec types: immutable objects ``compile`` builds from a pack's goals, skills,
FAQ, memory policy and learning files, and the runtime packages consume.

They live here, below the runtime, so that ``compile`` never imports a runtime package.
"""
