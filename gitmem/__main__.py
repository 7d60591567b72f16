"""`gitmem` and `python -m gitmem`: the prompt hook's quick path, else the command line."""

import sys


def main() -> None:
    from gitmem.integrate.hookrun import quick_argv

    quick = quick_argv(sys.argv[1:])
    if quick is not None:
        from gitmem.integrate.hookrun import run_quick

        sys.exit(run_quick(*quick))
    from gitmem.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
