"""The command line of every script in scripts/: argparse with the script's docstring as its --help,
and bad input as one line (the argument, what is wrong, the usage) with exit status 2, as p0sim does.

    parser = Parser(__doc__)
    parser.add_argument("OUT", type=directory, help="...")
    args = parser.parse_args(argv[1:])
"""
import argparse
import os


class Parser(argparse.ArgumentParser):
    def __init__(self, doc, **kwargs):
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)

    def error(self, message):
        usage = " ".join(self.format_usage().split())
        self.exit(2, f"{self.prog}: {message} ({usage})\n")


def directory(path):
    """An existing directory."""
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"'{path}' is not a directory")
    return path


def existing_file(path):
    """An existing, readable file."""
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"'{path}' is not a readable file")
    return path


def arm(text):
    """NAME=RUN_DIR[,RUN_DIR...]: an arm's name and its run directories."""
    name, sep, dirs = text.partition("=")
    if not sep or not name or not any(dirs.split(",")):
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=RUN_DIR[,RUN_DIR...]")
    return name, [d for d in dirs.split(",") if d]
