"""The ``chronoprobe`` command line."""
