"""`gitmem` and `python -m gitmem`: the store's warm server when one runs, else the prompt
hook's quick path, else the command line.

Only the cheapest check comes first: handing the call to the server (gitmem.serve.client, a stat
when none runs) imports neither the command line nor the hook layer.
"""

import sys


def main() -> None:
    from gitmem.serve.client import forward

    code = forward(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    if "--hook" in sys.argv[1:]:
        from gitmem.integrate.hookrun import quick_argv

        quick = quick_argv(sys.argv[1:])
        if quick is not None:
            from gitmem.integrate.hookrun import run_quick

            sys.exit(run_quick(*quick))
    from gitmem.cli import run_in_process

    run_in_process()


if __name__ == "__main__":
    main()
