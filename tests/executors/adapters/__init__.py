"""Small adapter programs that the stdio executor tests run as real child processes.

Each is a script run with `sys.executable`; none imports anything outside the standard library.
"""
