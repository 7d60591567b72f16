"""`gitmem` and `python -m gitmem`: the store's warm server when one runs, else the prompt
hook's quick path, else the command line.

Only the cheapest check comes first: handing the call to the server (gitmem.serve.client, a stat
when none runs) imports neither the command line nor the hook layer.
"""

import sys


def main() -> None:
    from gitmem.serve.client import forward

    hook = "--hook" in sys.argv[1:]
    try:
        code = forward(sys.argv[1:])
    except Exception:
        if not hook:
            raise
        # An agent's hook must answer whatever happens, and the hooks the server answers only
        # read: a bug on the way to the server means the hook answers in this process.
        code = None
    if code is not None:
        sys.exit(code)
    if hook:
        from gitmem.integrate.hookrun import quick_argv

        quick = quick_argv(sys.argv[1:])
        if quick is not None:
            from gitmem.integrate.hookrun import run_quick

            sys.exit(run_quick(*quick))
    from gitmem.cli import run_in_process

    run_in_process()


if __name__ == "__main__":
    main()
