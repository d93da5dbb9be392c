"""What people start: the command line and, later, the desktop editor."""
