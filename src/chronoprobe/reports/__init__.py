"""Result files and human-readable reports."""
